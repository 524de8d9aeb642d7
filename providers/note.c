/*
 * note.c — reading USDT notes from .note.stapsdt.
 *
 * <sys/sdt.h> emits one ELF note per probe site into .note.stapsdt:
 *
 *   $ readelf -n /usr/bin/python3.11
 *   Displaying notes found in: .note.stapsdt
 *     Owner                Data size  Description
 *     stapsdt              0x00000033 NT_STAPSDT (SystemTap probe descriptors)
 *       Provider: python
 *       Name: audit
 *       Location: 0x000000000042512a, Base: 0x00000000008cc5a0, Semaphore: 0x0000000000a84276
 *       Arguments: 8@%rbx 8@%r15
 *
 * The descriptor of owner "stapsdt", type 3, is, on x86-64:
 *
 *   u64 pc         link-time address of the probe's nop
 *   u64 base       link-time address of .stapsdt.base when assembled
 *   u64 semaphore  link-time address of the 16-bit counter in .probes, 0: none
 *   char provider[], name[], args[]   NUL-terminated, args may be ""
 *
 * Prelink moved objects without rewriting their notes: the note's base then
 * differs from the actual address of .stapsdt.base, and pc and semaphore
 * move by the same amount.  The adjustment is applied only when both are
 * non-zero — a zero on either side means "nothing to compare with".
 *
 * File offsets go through PT_LOAD (elf_obj_vaddr_to_off), never through a
 * section: the semaphore lives in a data segment whose vaddr - offset
 * differs from the text segment's.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "note.h"
#include "log.h"

#define STAPSDT_OWNER   "stapsdt"
#define STAPSDT_TYPE    3
#define STAPSDT_ADDRS   (3 * sizeof(uint64_t))

struct note_ctx {
	struct elf_obj *nc_eo;
	int      nc_have_base;  /* .stapsdt.base present with sh_addr != 0 */
	uint64_t nc_base_addr;
	size_t   nc_index;      /* note number in the section, for messages */
};

static int note_bad(const struct note_ctx *nc, const char *why)
{
	elf_obj_err(nc->nc_eo, "usdt: '%s': note %zu: malformed stapsdt note: %s",
	       nc->nc_eo->eo_path, nc->nc_index, why);
	return -EBADMSG;
}

static uint64_t get_u64(const char *p)
{
	uint64_t v;

	/* Host and file are both little-endian x86-64 (checked at open). */
	memcpy(&v, p, sizeof(v));
	return v;
}

/* Next NUL-terminated string inside [*p, end); NULL if it runs past. */
static const char *take_str(const char **p, const char *end)
{
	const char *s = *p, *nul;

	if (s >= end)
		return NULL;
	nul = memchr(s, '\0', end - s);
	if (!nul)
		return NULL;
	*p = nul + 1;
	return s;
}

static int note_addrs(const struct note_ctx *nc, struct usdt_note *un)
{
	uint64_t shift = 0;

	if (nc->nc_have_base && un->un_base)
		shift = nc->nc_base_addr - un->un_base;
	un->un_pc_vaddr = un->un_pc + shift;
	un->un_sema_vaddr = un->un_sema ? un->un_sema + shift : 0;

	if (elf_obj_vaddr_to_off(nc->nc_eo, un->un_pc_vaddr, &un->un_pc_off)) {
		elf_obj_err(nc->nc_eo, "usdt: '%s': note %zu (%s:%s): pc 0x%llx is outside every loaded segment",
		       nc->nc_eo->eo_path, nc->nc_index, un->un_provider,
		       un->un_name, (unsigned long long)un->un_pc_vaddr);
		return -ERANGE;
	}
	un->un_sema_off = 0;
	if (un->un_sema_vaddr &&
	    elf_obj_vaddr_to_off(nc->nc_eo, un->un_sema_vaddr, &un->un_sema_off)) {
		elf_obj_err(nc->nc_eo, "usdt: '%s': note %zu (%s:%s): semaphore 0x%llx is outside the file part of every loaded segment",
		       nc->nc_eo->eo_path, nc->nc_index, un->un_provider,
		       un->un_name, (unsigned long long)un->un_sema_vaddr);
		return -ERANGE;
	}
	return 0;
}

static void note_clear(struct usdt_note *un)
{
	free(un->un_provider);
	free(un->un_name);
	free(un->un_args);
	memset(un, 0, sizeof(*un));
}

/* Parse one stapsdt descriptor into @un (zeroed by the caller). */
static int note_parse(const struct note_ctx *nc, const char *desc,
		      size_t len, struct usdt_note *un)
{
	const char *p = desc + STAPSDT_ADDRS, *end = desc + len;
	const char *prov, *name, *args;

	if (len < STAPSDT_ADDRS)
		return note_bad(nc, "descriptor shorter than 24 bytes");
	prov = take_str(&p, end);
	name = prov ? take_str(&p, end) : NULL;
	args = name ? take_str(&p, end) : NULL;
	if (!prov)
		return note_bad(nc, "provider string runs past the descriptor");
	if (!name)
		return note_bad(nc, "name string runs past the descriptor");
	if (!args)
		return note_bad(nc, "argument string runs past the descriptor");
	un->un_pc = get_u64(desc);
	un->un_base = get_u64(desc + 8);
	un->un_sema = get_u64(desc + 16);
	un->un_provider = strdup(prov);
	un->un_name = strdup(name);
	un->un_args = strdup(args);
	if (!un->un_provider || !un->un_name || !un->un_args)
		return -ENOMEM;
	return note_addrs(nc, un);
}

static int notes_grow(struct usdt_notes *out, size_t *cap)
{
	struct usdt_note *v;
	size_t ncap = *cap ? *cap * 2 : 16;

	v = realloc(out->un_v, ncap * sizeof(*v));
	if (!v)
		return -ENOMEM;
	out->un_v = v;
	*cap = ncap;
	return 0;
}

static int notes_from_data(struct note_ctx *nc, Elf_Data *d,
			   struct usdt_notes *out, size_t *cap)
{
	size_t off = 0, next, name_off, desc_off;
	GElf_Nhdr nh;
	int err;

	while (off < d->d_size) {
		const char *buf = d->d_buf;
		struct usdt_note *un;

		next = gelf_getnote(d, off, &nh, &name_off, &desc_off);
		if (!next)
			return note_bad(nc, "note header or sizes run past the section");
		off = next;
		if (nh.n_type != STAPSDT_TYPE ||
		    nh.n_namesz != sizeof(STAPSDT_OWNER) ||
		    memcmp(buf + name_off, STAPSDT_OWNER, sizeof(STAPSDT_OWNER))) {
			nc->nc_index++;
			continue;
		}
		if (out->un_n == *cap && (err = notes_grow(out, cap)))
			return err;
		un = &out->un_v[out->un_n];
		memset(un, 0, sizeof(*un));
		err = note_parse(nc, buf + desc_off, nh.n_descsz, un);
		if (err) {
			note_clear(un);
			return err;
		}
		out->un_n++;
		nc->nc_index++;
	}
	return 0;
}

int usdt_notes_read(struct elf_obj *eo, struct usdt_notes *out)
{
	struct note_ctx nc = { .nc_eo = eo };
	GElf_Shdr sh, bsh;
	Elf_Data *d = NULL;
	Elf_Scn *scn;
	size_t cap = 0;
	int err;

	memset(out, 0, sizeof(*out));
	if (elf_obj_find_section(eo, ".note.stapsdt", &sh, &scn)) {
		elf_obj_err(eo, "usdt: \'%s\': no .note.stapsdt section", eo->eo_path);
		return -ENODATA;
	}
	if (sh.sh_type != SHT_NOTE) {
		elf_obj_err(eo, "usdt: \'%s\': .note.stapsdt is not a note section (type %u)",
		       eo->eo_path, sh.sh_type);
		return -EBADMSG;
	}
	if (!elf_obj_find_section(eo, ".stapsdt.base", &bsh, NULL) && bsh.sh_addr) {
		nc.nc_have_base = 1;
		nc.nc_base_addr = bsh.sh_addr;
	}
	elf_errno();	/* drop a stale error: NULL below must mean the end */
	while ((d = elf_getdata(scn, d))) {
		err = notes_from_data(&nc, d, out, &cap);
		if (err)
			goto fail;
	}
	err = elf_errno();
	if (err) {
		elf_obj_err(eo, "usdt: \'%s\': .note.stapsdt: %s", eo->eo_path, elf_errmsg(err));
		err = elf_lib_oom(err) ? -ENOMEM : -EBADMSG;
		goto fail;
	}
	return 0;
fail:
	usdt_notes_free(out);
	return err;
}

void usdt_notes_free(struct usdt_notes *n)
{
	size_t i;

	for (i = 0; i < n->un_n; i++)
		note_clear(&n->un_v[i]);
	free(n->un_v);
	n->un_v = NULL;
	n->un_n = 0;
}
