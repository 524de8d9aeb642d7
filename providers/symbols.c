/*
 * symbols.c — function symbols of one ELF object (see symbols.h).
 *
 * A stripped executable keeps only .dynsym, which holds just what it
 * exports (often nothing but _start's neighbours): its internal functions
 * are then not probeable by name, as with every symbol-based tracer.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "log.h"
#include "symbols.h"

/* A code section that is not a PLT: stubs jump elsewhere, and probing
 * one would trace every caller of an import, not a function. */
static int sym_section_ok(struct elf_obj *eo, size_t shstrndx, GElf_Sym *sym)
{
	Elf_Scn *scn;
	GElf_Shdr sh;
	const char *name;

	if (sym->st_shndx == SHN_UNDEF || sym->st_shndx >= SHN_LORESERVE)
		return 0;
	scn = elf_getscn(eo->eo_elf, sym->st_shndx);
	if (!scn || !gelf_getshdr(scn, &sh) || !(sh.sh_flags & SHF_EXECINSTR))
		return 0;
	name = elf_strptr(eo->eo_elf, shstrndx, sh.sh_name);
	return name && strncmp(name, ".plt", 4) != 0;
}

static int syms_add(struct func_syms *fss, const char *name,
		    const GElf_Sym *sym)
{
	struct func_sym *fs;

	if (fss->fss_n == fss->fss_cap) {
		size_t cap = fss->fss_cap ? fss->fss_cap * 2 : 64;
		struct func_sym *v = realloc(fss->fss_v, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		fss->fss_v = v;
		fss->fss_cap = cap;
	}
	fs = &fss->fss_v[fss->fss_n];
	fs->fs_name = strdup(name);
	if (!fs->fs_name)
		return -ENOMEM;
	fs->fs_addr = sym->st_value;
	fs->fs_size = sym->st_size;
	fs->fs_bind = GELF_ST_BIND(sym->st_info);
	fss->fss_n++;
	return 0;
}

/* The .gnu.version data that goes with the .dynsym @dynsym, or NULL. */
static Elf_Data *syms_versym(struct elf_obj *eo, Elf_Scn *dynsym)
{
	size_t ndx = elf_ndxscn(dynsym);
	Elf_Scn *scn = NULL;

	while ((scn = elf_nextscn(eo->eo_elf, scn))) {
		GElf_Shdr sh;

		if (gelf_getshdr(scn, &sh) && sh.sh_type == SHT_GNU_versym &&
		    sh.sh_link == ndx)
			return elf_getdata(scn, NULL);
	}
	return NULL;
}

/*
 * A non-default version (memcpy@GLIBC_2.2.5, one '@' in readelf) is kept
 * for binaries linked long ago; nothing linked today calls it, and it
 * carries the same name as the default one.
 */
static int sym_hidden_version(Elf_Data *versym, size_t i)
{
	GElf_Versym v;

	return versym && gelf_getversym(versym, (int)i, &v) &&
	       (v & 0x8000);    /* VERSYM_HIDDEN */
}

/* A string table or version section libelf could not load: ours to say,
 * not a symbol the file lacks. */
static int syms_oom(const struct elf_obj *eo)
{
	elf_obj_err(eo, "pid: '%s': symbol table: out of memory", eo->eo_path);
	return -ENOMEM;
}

/* Every kept function of one symbol table section. */
static int syms_read_table(struct elf_obj *eo, Elf_Scn *scn,
			   const GElf_Shdr *sh, size_t shstrndx,
			   struct func_syms *out)
{
	Elf_Data *d, *versym = NULL;
	size_t n;
	int err;

	elf_errno();	/* drop a stale error: each NULL below is asked */
	d = elf_getdata(scn, NULL);
	if (!sh->sh_entsize || !d) {
		err = d ? 0 : elf_errno();
		elf_obj_err(eo, "pid: '%s': unreadable symbol table: %s", eo->eo_path,
		       d ? "entry size 0" : elf_errmsg(err));
		return elf_lib_oom(err) ? -ENOMEM : -ENOEXEC;
	}
	if (sh->sh_type == SHT_DYNSYM) {
		versym = syms_versym(eo, scn);
		if (!versym && elf_lib_oom(elf_errno()))
			return syms_oom(eo);
	}
	n = d->d_size / sh->sh_entsize;
	for (size_t i = 1; i < n; i++) {
		GElf_Sym sym;
		const char *name;

		if (!gelf_getsym(d, i, &sym) ||
		    GELF_ST_TYPE(sym.st_info) != STT_FUNC || !sym.st_value ||
		    sym_hidden_version(versym, i))
			continue;
		name = elf_strptr(eo->eo_elf, sh->sh_link, sym.st_name);
		if (!name && elf_lib_oom(elf_errno()))
			return syms_oom(eo);
		if (!name || !*name || !sym_section_ok(eo, shstrndx, &sym))
			continue;
		err = syms_add(out, name, &sym);
		if (err)
			return err;
	}
	return 0;
}

static int sym_cmp(const void *a, const void *b)
{
	const struct func_sym *x = a, *y = b;

	if (x->fs_addr != y->fs_addr)
		return x->fs_addr < y->fs_addr ? -1 : 1;
	return strcmp(x->fs_name, y->fs_name);
}

/* A function in both .symtab and .dynsym: one entry.  Sizes agree in
 * linker output; the larger one is kept if they do not. */
static void syms_dedupe(struct func_syms *fss)
{
	size_t w = 0;

	if (!fss->fss_n)
		return;
	qsort(fss->fss_v, fss->fss_n, sizeof(fss->fss_v[0]), sym_cmp);
	for (size_t r = 1; r < fss->fss_n; r++) {
		struct func_sym *k = &fss->fss_v[w], *s = &fss->fss_v[r];

		if (!sym_cmp(k, s)) {
			if (s->fs_size > k->fs_size)
				k->fs_size = s->fs_size;
			if (k->fs_bind == STB_LOCAL)
				k->fs_bind = s->fs_bind;
			free(s->fs_name);
			continue;
		}
		fss->fss_v[++w] = *s;
	}
	fss->fss_n = w + 1;
}

int func_syms_read(struct elf_obj *eo, struct func_syms *out)
{
	Elf_Scn *scn = NULL;
	size_t shstrndx;
	int err = 0;

	memset(out, 0, sizeof(*out));
	elf_errno();
	if (elf_getshdrstrndx(eo->eo_elf, &shstrndx))
		return elf_lib_oom(elf_errno()) ? syms_oom(eo) : 0;  /* no sections: no symbols */
	while (!err && (scn = elf_nextscn(eo->eo_elf, scn))) {
		GElf_Shdr sh;

		if (!gelf_getshdr(scn, &sh) ||
		    (sh.sh_type != SHT_SYMTAB && sh.sh_type != SHT_DYNSYM))
			continue;
		err = syms_read_table(eo, scn, &sh, shstrndx, out);
	}
	if (err) {
		func_syms_free(out);
		return err;
	}
	syms_dedupe(out);
	return 0;
}

void func_syms_free(struct func_syms *fss)
{
	for (size_t i = 0; i < fss->fss_n; i++)
		free(fss->fss_v[i].fs_name);
	free(fss->fss_v);
	memset(fss, 0, sizeof(*fss));
}
