/*
 * note_elfw.h — a tiny ELF writer for unit tests: the test decides every
 * byte that matters (segments, section addresses and offsets, notes,
 * symbols), so a check can state the exact offset it expects and files can
 * be made wrong on purpose.  Header-only: unit tests are one file each.
 *
 * Layout: the Elf64_Ehdr at 0, program headers at 64, section contents
 * where the test puts them (ns_off, inside nw_size bytes), then the
 * section-name table and the section headers appended after nw_size.
 * Section i of nw_sec[] gets index i + 1 (index 0 is the null section).
 */
#ifndef NOTE_ELFW_H
#define NOTE_ELFW_H

#include <elf.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define NW_MAX_PH  8
#define NW_MAX_SEC 16

struct nw_sec {
	const char *ns_name;
	uint32_t ns_type;
	uint64_t ns_flags, ns_addr, ns_off;
	const void *ns_data;            /* copied to ns_off unless NOBITS */
	uint64_t ns_size;
	uint32_t ns_link, ns_info;
	uint64_t ns_align, ns_entsize;
};

struct nw_elf {
	uint16_t nw_type;               /* ET_EXEC, ET_DYN, ... */
	uint16_t nw_machine;            /* 0: EM_X86_64 */
	size_t   nw_size;               /* bytes before the section names */
	size_t   nw_nph;
	Elf64_Phdr nw_ph[NW_MAX_PH];
	size_t   nw_nsec;
	struct nw_sec nw_sec[NW_MAX_SEC];
};

/* Append a byte string to a growing buffer (notes, string tables). */
struct nw_buf {
	unsigned char nb_b[4096];
	size_t nb_n;
};

static inline void nw_put(struct nw_buf *nb, const void *p, size_t n)
{
	if (nb->nb_n + n > sizeof(nb->nb_b))
		abort();
	memcpy(nb->nb_b + nb->nb_n, p, n);
	nb->nb_n += n;
}

static inline void nw_align4(struct nw_buf *nb)
{
	static const unsigned char z[4];

	nw_put(nb, z, (4 - nb->nb_n % 4) % 4);
}

/* One raw note; @descsz is what the header claims, @dlen what is written. */
static inline void nw_note_raw(struct nw_buf *nb, const char *owner,
			       uint32_t type, const void *desc, uint32_t descsz,
			       size_t dlen)
{
	uint32_t h[3] = { (uint32_t)strlen(owner) + 1, descsz, type };

	nw_put(nb, h, sizeof(h));
	nw_put(nb, owner, h[0]);
	nw_align4(nb);
	nw_put(nb, desc, dlen);
	nw_align4(nb);
}

/* A stapsdt descriptor: pc, base, sema, then three NUL-terminated strings. */
static inline size_t nw_sdt_desc(unsigned char *d, uint64_t pc, uint64_t base,
				 uint64_t sema, const char *prov,
				 const char *name, const char *args)
{
	size_t n = 24;

	memcpy(d, &pc, 8);
	memcpy(d + 8, &base, 8);
	memcpy(d + 16, &sema, 8);
	memcpy(d + n, prov, strlen(prov) + 1);
	n += strlen(prov) + 1;
	memcpy(d + n, name, strlen(name) + 1);
	n += strlen(name) + 1;
	memcpy(d + n, args, strlen(args) + 1);
	n += strlen(args) + 1;
	return n;
}

static inline void nw_note_sdt(struct nw_buf *nb, uint64_t pc, uint64_t base,
			       uint64_t sema, const char *prov,
			       const char *name, const char *args)
{
	unsigned char d[512];
	size_t n = nw_sdt_desc(d, pc, base, sema, prov, name, args);

	nw_note_raw(nb, "stapsdt", 3, d, n, n);
}

/* Add a string to a string table, returning its offset. */
static inline uint32_t nw_str(struct nw_buf *nb, const char *s)
{
	uint32_t off = nb->nb_n;

	if (!nb->nb_n)
		nw_put(nb, "", 1), off = 1;
	nw_put(nb, s, strlen(s) + 1);
	return off;
}

static inline void nw_sym(struct nw_buf *tab, struct nw_buf *str,
			  const char *name, uint64_t value, uint16_t shndx)
{
	Elf64_Sym s = {
		.st_name = name ? nw_str(str, name) : 0,
		.st_info = ELF64_ST_INFO(STB_GLOBAL, STT_FUNC),
		.st_shndx = shndx,
		.st_value = value,
		.st_size = 1,
	};

	nw_put(tab, &s, sizeof(s));
}

static inline Elf64_Phdr nw_load(uint32_t flags, uint64_t off, uint64_t vaddr,
				 uint64_t filesz, uint64_t memsz)
{
	Elf64_Phdr ph = {
		.p_type = PT_LOAD, .p_flags = flags, .p_offset = off,
		.p_vaddr = vaddr, .p_paddr = vaddr, .p_filesz = filesz,
		.p_memsz = memsz, .p_align = 0x1000,
	};

	return ph;
}

static inline struct nw_sec *nw_add_sec(struct nw_elf *e, const char *name,
					uint32_t type, uint64_t flags,
					uint64_t addr, uint64_t off,
					const void *data, uint64_t size)
{
	struct nw_sec *s = &e->nw_sec[e->nw_nsec++];

	if (e->nw_nsec > NW_MAX_SEC)
		abort();
	memset(s, 0, sizeof(*s));
	s->ns_name = name;
	s->ns_type = type;
	s->ns_flags = flags;
	s->ns_addr = addr;
	s->ns_off = off;
	s->ns_data = data;
	s->ns_size = size;
	s->ns_align = type == SHT_NOTE ? 4 : 1;
	return s;
}

/* Serialise @e; returns the file's total size, or 0 on failure. */
static inline size_t nw_image(const struct nw_elf *e, unsigned char **out)
{
	struct nw_buf names = { .nb_n = 0 };
	uint32_t name_off[NW_MAX_SEC], shstr_name;
	size_t i, nsh = e->nw_nsec + 2, shstr_off, sh_off, total;
	Elf64_Ehdr *eh;
	Elf64_Shdr *sh;
	unsigned char *img;

	for (i = 0; i < e->nw_nsec; i++)
		name_off[i] = nw_str(&names, e->nw_sec[i].ns_name);
	shstr_name = nw_str(&names, ".shstrtab");
	shstr_off = e->nw_size;
	sh_off = (shstr_off + names.nb_n + 7) & ~(size_t)7;
	total = sh_off + nsh * sizeof(Elf64_Shdr);
	img = calloc(1, total);
	if (!img)
		return 0;

	eh = (Elf64_Ehdr *)img;
	memcpy(eh->e_ident, ELFMAG, SELFMAG);
	eh->e_ident[EI_CLASS] = ELFCLASS64;
	eh->e_ident[EI_DATA] = ELFDATA2LSB;
	eh->e_ident[EI_VERSION] = EV_CURRENT;
	eh->e_type = e->nw_type;
	eh->e_machine = e->nw_machine ? e->nw_machine : EM_X86_64;
	eh->e_version = EV_CURRENT;
	eh->e_phoff = e->nw_nph ? sizeof(*eh) : 0;
	eh->e_shoff = sh_off;
	eh->e_ehsize = sizeof(*eh);
	eh->e_phentsize = sizeof(Elf64_Phdr);
	eh->e_phnum = e->nw_nph;
	eh->e_shentsize = sizeof(Elf64_Shdr);
	eh->e_shnum = nsh;
	eh->e_shstrndx = nsh - 1;
	memcpy(img + sizeof(*eh), e->nw_ph, e->nw_nph * sizeof(Elf64_Phdr));

	sh = (Elf64_Shdr *)(img + sh_off);
	for (i = 0; i < e->nw_nsec; i++) {
		const struct nw_sec *s = &e->nw_sec[i];

		if (s->ns_type != SHT_NOBITS && s->ns_data) {
			if (s->ns_off + s->ns_size > e->nw_size)
				abort();
			memcpy(img + s->ns_off, s->ns_data, s->ns_size);
		}
		sh[i + 1] = (Elf64_Shdr){
			.sh_name = name_off[i], .sh_type = s->ns_type,
			.sh_flags = s->ns_flags, .sh_addr = s->ns_addr,
			.sh_offset = s->ns_off, .sh_size = s->ns_size,
			.sh_link = s->ns_link, .sh_info = s->ns_info,
			.sh_addralign = s->ns_align, .sh_entsize = s->ns_entsize,
		};
	}
	memcpy(img + shstr_off, names.nb_b, names.nb_n);
	sh[nsh - 1] = (Elf64_Shdr){
		.sh_name = shstr_name, .sh_type = SHT_STRTAB,
		.sh_offset = shstr_off, .sh_size = names.nb_n,
		.sh_addralign = 1,
	};
	*out = img;
	return total;
}

static inline int nw_write_bytes(const char *path, const void *p, size_t n)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	int ok;

	if (fd < 0)
		return -1;
	ok = write(fd, p, n) == (ssize_t)n;
	return (close(fd) || !ok) ? -1 : 0;
}

static inline int nw_write(const struct nw_elf *e, const char *path)
{
	unsigned char *img;
	size_t n = nw_image(e, &img);
	int err;

	if (!n)
		return -1;
	err = nw_write_bytes(path, img, n);
	free(img);
	return err;
}

#endif
