/*
 * elf.c — opening ELF objects and answering the few questions the
 * providers ask of them: sections by name, symbols, and the mapping between
 * link-time virtual addresses and file offsets.
 *
 * A uprobe is placed at (inode, file offset).  Notes and symbols give
 * link-time virtual addresses, and the only authority for turning one into
 * the other is the PT_LOAD program header that contains it: that is what
 * the kernel's ELF loader maps.  Section headers may not agree with the
 * segments (and are absent from what the loader reads), and lld lays out
 * segments whose p_vaddr - p_offset differs from one segment to the next,
 * so no single "image base" works either.
 *
 * Only x86-64 little-endian ET_EXEC and ET_DYN files are accepted.  Every
 * header, program header, section header and section body is checked to
 * lie inside the file at open time, so later libelf calls cannot run off a
 * truncated file and need no per-call size checks.
 *
 * elf_obj_open() reports its failures.  The lookups (section, symbol,
 * address, bias) return -ENOENT/-ERANGE silently: "not found" is an
 * ordinary outcome for them and only the caller knows whether it is an
 * error worth a message and what to name in it.
 *
 * The file is read with ELF_C_READ (pread), not ELF_C_READ_MMAP: a file
 * truncated under us then gives a read error instead of SIGBUS, and a
 * tracer that inspects its own objects leaves no extra mappings of them in
 * its /proc/self/maps.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "elf.h"
#include "realfile.h"
#include "log.h"

/* x86-64 maps in 4 KiB pages whatever p_align says. */
#define ELF_PAGE_SIZE 4096ULL

static pthread_once_t elf_lib_once = PTHREAD_ONCE_INIT;
static int elf_lib_ok;

static void elf_lib_init(void)
{
	elf_lib_ok = elf_version(EV_CURRENT) != EV_NONE;
}

/* a + b <= limit without wrapping. */
static int range_in_file(uint64_t a, uint64_t b, uint64_t limit)
{
	return a <= limit && b <= limit - a;
}

/*
 * The parts of the identification libelf would otherwise accept or report
 * vaguely: we want "32-bit" or "big-endian" in the message, not "invalid".
 */
static int elf_check_ident(const struct elf_obj *eo, uint64_t size)
{
	const char *path = eo->eo_path;
	int fd = eo->eo_fd;
	unsigned char id[EI_NIDENT];
	ssize_t n;

	n = pread(fd, id, sizeof(id), 0);
	if (n < 0) {
		int err = errno;

		elf_obj_err(eo, "elf: '%s': read: %s", path, pc_strerror(err));
		return -err;
	}
	if (n < SELFMAG || memcmp(id, ELFMAG, SELFMAG)) {
		elf_obj_err(eo, "elf: '%s': not an ELF file", path);
		return -ENOEXEC;
	}
	if (n < EI_NIDENT) {
		elf_obj_err(eo, "elf: '%s': truncated ELF file (%zd bytes)", path, n);
		return -ENOEXEC;
	}
	if (id[EI_CLASS] != ELFCLASS64) {
		elf_obj_err(eo, "elf: '%s': not a 64-bit ELF file (class %u)", path,
		       id[EI_CLASS]);
		return -ENOEXEC;
	}
	if (id[EI_DATA] != ELFDATA2LSB) {
		elf_obj_err(eo, "elf: '%s': not a little-endian ELF file", path);
		return -ENOEXEC;
	}
	if (size < sizeof(Elf64_Ehdr)) {
		elf_obj_err(eo, "elf: '%s': truncated ELF header (%llu bytes)", path,
		       (unsigned long long)size);
		return -ENOEXEC;
	}
	return 0;
}

static int elf_check_ehdr(struct elf_obj *eo)
{
	const GElf_Ehdr *eh = &eo->eo_ehdr;

	if (eh->e_machine != EM_X86_64) {
		elf_obj_err(eo, "elf: '%s': not an x86-64 ELF file (machine %u)",
		       eo->eo_path, eh->e_machine);
		return -ENOEXEC;
	}
	if (eh->e_type != ET_EXEC && eh->e_type != ET_DYN) {
		elf_obj_err(eo, "elf: '%s': not an executable or shared object (type %u)",
		       eo->eo_path, eh->e_type);
		return -ENOEXEC;
	}
	return 0;
}

static int elf_truncated(const struct elf_obj *eo, const char *what)
{
	elf_obj_err(eo, "elf: '%s': truncated or corrupt ELF file (%s)", eo->eo_path,
	       what);
	return -ENOEXEC;
}

/* elfutils has no public code for it, only its message (the C locale:
 * we never call setlocale). */
int elf_lib_oom(int err)
{
	const char *msg = err ? elf_errmsg(err) : NULL;

	return msg && !strcmp(msg, "out of memory");
}

/* libelf's own failure: out of memory is -ENOMEM, not a corrupt file. */
static int elf_failed(const struct elf_obj *eo)
{
	int code = elf_errno();
	const char *msg = elf_errmsg(code);

	if (elf_lib_oom(code)) {
		elf_obj_err(eo, "elf: '%s': out of memory", eo->eo_path);
		return -ENOMEM;
	}
	if (eo->eo_hush)
		return -ELIBBAD;	/* elf_obj_open tries once more */
	return elf_truncated(eo, msg);
}

/*
 * Header counts as the file states them.  libelf quietly lowers counts
 * that do not fit in the file, which would hide a truncation; with
 * extended numbering the real counts are in section header 0.
 */
static int elf_raw_counts(struct elf_obj *eo, uint64_t size, size_t *phnum,
			  size_t *shnum)
{
	const GElf_Ehdr *eh = &eo->eo_ehdr;
	Elf64_Shdr sh0;

	/* A zero table offset means "no table", whatever the count says. */
	*phnum = eh->e_phoff ? eh->e_phnum : 0;
	*shnum = eh->e_shoff ? eh->e_shnum : 0;
	if (!eh->e_shoff || (eh->e_shnum && eh->e_phnum != PN_XNUM))
		return 0;
	if (!range_in_file(eh->e_shoff, sizeof(sh0), size) ||
	    pread(eo->eo_fd, &sh0, sizeof(sh0), eh->e_shoff) != sizeof(sh0))
		return elf_truncated(eo, "section headers");
	if (!eh->e_shnum)
		*shnum = sh0.sh_size;
	if (eh->e_phnum == PN_XNUM)
		*phnum = sh0.sh_info;
	return 0;
}

static int elf_load_phdrs(struct elf_obj *eo, uint64_t size, size_t n)
{
	const GElf_Ehdr *eh = &eo->eo_ehdr;
	size_t i, got;

	if (!n)
		return 0;
	if (eh->e_phentsize != sizeof(Elf64_Phdr) ||
	    !range_in_file(eh->e_phoff, (uint64_t)n * sizeof(Elf64_Phdr), size) ||
	    elf_getphdrnum(eo->eo_elf, &got) || got != n)
		return elf_truncated(eo, "program headers");
	eo->eo_phdrs = calloc(n, sizeof(*eo->eo_phdrs));
	if (!eo->eo_phdrs)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		GElf_Phdr *ph = &eo->eo_phdrs[i];

		if (!gelf_getphdr(eo->eo_elf, i, ph))
			return elf_failed(eo);
		if (ph->p_type == PT_LOAD &&
		    (!range_in_file(ph->p_offset, ph->p_filesz, size) ||
		     ph->p_filesz > ph->p_memsz))
			return elf_truncated(eo, "PT_LOAD segment");
	}
	eo->eo_nphdr = n;
	return 0;
}

static int elf_check_sections(struct elf_obj *eo, uint64_t size, size_t n)
{
	const GElf_Ehdr *eh = &eo->eo_ehdr;
	Elf_Scn *scn = NULL;
	size_t got, strndx;

	if (!n)
		return 0;
	if (eh->e_shentsize != sizeof(Elf64_Shdr) ||
	    !range_in_file(eh->e_shoff, (uint64_t)n * sizeof(Elf64_Shdr), size) ||
	    elf_getshdrnum(eo->eo_elf, &got) || got != n)
		return elf_truncated(eo, "section headers");
	if (elf_getshdrstrndx(eo->eo_elf, &strndx) || strndx >= n)
		return elf_truncated(eo, "section name table index");
	while ((scn = elf_nextscn(eo->eo_elf, scn))) {
		GElf_Shdr sh;

		if (!gelf_getshdr(scn, &sh))
			return elf_failed(eo);
		if (sh.sh_type != SHT_NOBITS &&
		    !range_in_file(sh.sh_offset, sh.sh_size, size))
			return elf_truncated(eo, "section contents");
	}
	return 0;
}

/* Refuse anything but a regular file: a FIFO would block, a directory
 * would reach libelf as a read error. */
static int elf_open_fd(struct elf_obj *eo, uint64_t *size)
{
	const char *path = eo->eo_path;
	struct stat st;
	int fd, err;

	fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0) {
		err = errno;
		elf_obj_err(eo, "elf: '%s': %s", path, pc_strerror(err));
		return -err;
	}
	if (fstat(fd, &st)) {
		err = -errno;
		elf_obj_err(eo, "elf: '%s': stat: %s", path, pc_strerror(-err));
		goto fail;
	}
	if (!S_ISREG(st.st_mode)) {
		err = S_ISDIR(st.st_mode) ? -EISDIR : -ENOEXEC;
		elf_obj_err(eo, "elf: '%s': %s", path, S_ISDIR(st.st_mode) ?
		       "is a directory" : "not a regular file");
		goto fail;
	}
	eo->eo_fd = fd;
	*size = st.st_size;
	return 0;
fail:
	close(fd);
	return err;
}

static int elf_open_attempt(const char *path, unsigned flags, int hush,
			    struct elf_obj **out)
{
	struct elf_obj *eo;
	uint64_t size = 0;
	size_t phnum, shnum;
	int err;

	*out = NULL;
	pthread_once(&elf_lib_once, elf_lib_init);
	if (!elf_lib_ok) {
		pc_err_unless(flags & ELF_QUIET, "elf: libelf: %s",
			      elf_errmsg(-1));
		return -ENOSYS;
	}
	eo = calloc(1, sizeof(*eo));
	if (!eo)
		return -ENOMEM;
	eo->eo_fd = -1;
	eo->eo_quiet = !!(flags & ELF_QUIET);
	eo->eo_hush = hush;
	eo->eo_path = strdup(path);
	if (!eo->eo_path) {
		err = -ENOMEM;
		goto fail;
	}
	err = elf_open_fd(eo, &size);
	if (err)
		goto fail;
	err = elf_check_ident(eo, size);
	if (err)
		goto fail;
	eo->eo_elf = elf_begin(eo->eo_fd, ELF_C_READ, NULL);
	if (!eo->eo_elf || elf_kind(eo->eo_elf) != ELF_K_ELF ||
	    !gelf_getehdr(eo->eo_elf, &eo->eo_ehdr)) {
		err = elf_failed(eo);
		goto fail;
	}
	err = elf_check_ehdr(eo);
	if (!err)
		err = elf_raw_counts(eo, size, &phnum, &shnum);
	if (!err)
		err = elf_load_phdrs(eo, size, phnum);
	if (!err)
		err = elf_check_sections(eo, size, shnum);
	if (err)
		goto fail;
	eo->eo_hush = 0;
	*out = eo;
	return 0;
fail:
	elf_obj_close(eo);
	return err;
}

/*
 * elfutils (0.188) reports some of its failed allocations as a corrupt
 * file ("invalid operand"), not as out of memory: a '*' caller skips a
 * corrupt object without a word, so one transient failure lost every
 * site of an object the process maps (test_nomem's provider sweeps).  A
 * file libelf found corrupt (our own checks are deterministic) is read
 * once more, and only that attempt says so: a failure that does not come
 * back was not the file's.
 */
int elf_obj_open(const char *path, unsigned flags, struct elf_obj **out)
{
	int err = elf_open_attempt(path, flags, 1, out);

	if (err == -ELIBBAD)
		err = elf_open_attempt(path, flags, 0, out);
	return err;
}

void elf_obj_err(const struct elf_obj *eo, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	pc_verr(eo->eo_quiet, fmt, ap);
	va_end(ap);
}

int elf_obj_place(struct elf_obj *eo, uint64_t *kdev, uint64_t *ino)
{
	int err = 0;

	if (!eo->eo_placed) {
		err = realfile_id(eo->eo_fd, eo->eo_path, &eo->eo_kdev, &eo->eo_ino);
		eo->eo_placed = !err;
	}
	*kdev = eo->eo_kdev;
	*ino = eo->eo_ino;
	return err;
}

void elf_obj_close(struct elf_obj *eo)
{
	if (!eo)
		return;
	if (eo->eo_elf)
		elf_end(eo->eo_elf);
	if (eo->eo_fd >= 0)
		close(eo->eo_fd);
	free(eo->eo_phdrs);
	free(eo->eo_path);
	free(eo);
}

int elf_obj_find_section(struct elf_obj *eo, const char *name,
			 GElf_Shdr *shdr, Elf_Scn **scnp)
{
	Elf_Scn *scn = NULL;
	size_t strndx;

	if (elf_getshdrstrndx(eo->eo_elf, &strndx))
		return -ENOENT;
	while ((scn = elf_nextscn(eo->eo_elf, scn))) {
		GElf_Shdr sh;
		const char *s;

		if (!gelf_getshdr(scn, &sh))
			continue;
		s = elf_strptr(eo->eo_elf, strndx, sh.sh_name);
		if (!s || strcmp(s, name))
			continue;
		if (shdr)
			*shdr = sh;
		if (scnp)
			*scnp = scn;
		return 0;
	}
	return -ENOENT;
}

int elf_obj_vaddr_to_off(const struct elf_obj *eo, uint64_t vaddr,
			 uint64_t *off)
{
	size_t i;

	for (i = 0; i < eo->eo_nphdr; i++) {
		const GElf_Phdr *ph = &eo->eo_phdrs[i];
		uint64_t rel = vaddr - ph->p_vaddr;

		if (ph->p_type != PT_LOAD || vaddr < ph->p_vaddr ||
		    rel >= ph->p_memsz)
			continue;
		/* The zero-filled tail (bss) has no bytes in the file. */
		if (rel >= ph->p_filesz)
			return -ERANGE;
		*off = ph->p_offset + rel;
		return 0;
	}
	return -ERANGE;
}

/* First defined symbol called @name in the first section of @type. */
static int sym_find(struct elf_obj *eo, GElf_Word type, const char *name,
		    uint64_t *addr)
{
	Elf_Scn *scn = NULL;

	while ((scn = elf_nextscn(eo->eo_elf, scn))) {
		GElf_Shdr sh;
		Elf_Data *d;
		size_t i, n;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != type)
			continue;
		d = elf_getdata(scn, NULL);
		if (!d || !sh.sh_entsize)
			return -ENOENT;
		n = d->d_size / sh.sh_entsize;
		for (i = 1; i < n; i++) {
			GElf_Sym sym;
			const char *s;

			if (!gelf_getsym(d, i, &sym) || sym.st_shndx == SHN_UNDEF)
				continue;
			s = elf_strptr(eo->eo_elf, sh.sh_link, sym.st_name);
			if (s && !strcmp(s, name)) {
				*addr = sym.st_value;
				return 0;
			}
		}
		return -ENOENT;
	}
	return -ENOENT;
}

int elf_obj_sym_addr(struct elf_obj *eo, const char *name, uint64_t *addr)
{
	if (!sym_find(eo, SHT_SYMTAB, name, addr))
		return 0;
	return sym_find(eo, SHT_DYNSYM, name, addr);
}

/*
 * The kernel maps each PT_LOAD from its page-aligned file offset, so a
 * mapping's file offset lies in the page-aligned file range of the segment
 * it came from.  Adjacent segments may share a file page (lld); the first
 * segment in program-header order wins, which is right for the lowest
 * mapping of the object — the one procmaps passes.
 */
int elf_obj_load_bias(const struct elf_obj *eo, uint64_t map_start,
		      uint64_t map_off, uint64_t *bias)
{
	size_t i;

	for (i = 0; i < eo->eo_nphdr; i++) {
		const GElf_Phdr *ph = &eo->eo_phdrs[i];
		uint64_t lo, hi;

		if (ph->p_type != PT_LOAD || !ph->p_filesz)
			continue;
		lo = ph->p_offset & ~(ELF_PAGE_SIZE - 1);
		hi = (ph->p_offset + ph->p_filesz + ELF_PAGE_SIZE - 1) &
		     ~(ELF_PAGE_SIZE - 1);
		if (map_off < lo || map_off >= hi)
			continue;
		*bias = map_start - (ph->p_vaddr - ph->p_offset + map_off);
		return 0;
	}
	return -ERANGE;
}
