/*
 * notecmp — check probecheck's probe discovery against an independent
 * reader of the same notes, binutils' `readelf -n`.
 *
 *   notecmp FILE LIST        LIST is `probecheck list --json FILE`
 *   notecmp -p PID LIST      LIST is `probecheck list --json -p PID`
 *   notecmp --scan DIR...    print every x86-64 ELF file under DIR that
 *                            has a .note.stapsdt section
 *
 * FILE mode: every stapsdt note readelf prints must appear in LIST with the
 * same provider, name, location (pc), base, semaphore and argument string,
 * and LIST must hold nothing else.  Values are compared as 64-bit integers
 * parsed here, never through a double.  A note without a semaphore
 * (readelf: "Semaphore: 0x0000000000000000") must be "semaphore":null.
 *
 * PID mode: LIST is grouped by "path"; each object is compared as in FILE
 * mode (readelf runs on the path as the process sees it, through
 * /proc/PID/root), every line must carry "pid":PID, and the runtime
 * addresses are checked against /proc/PID/maps computed independently of
 * providers/: the site's file offset comes from this tool's own reading of
 * the program headers, and addr must be the start of the mapping that holds
 * that offset plus the distance into it (likewise sema_addr).  Every object
 * mapped in the process with a .note.stapsdt section must appear in LIST.
 *
 * Sites are matched in (provider, name, pc) order; when both sides have the
 * same number of sites they are paired one to one so a wrong field shows as
 * that field ("pc: readelf 0x1139 probecheck 0x1130"), not as a missing and
 * an extra site.
 *
 * --scan reads only the ELF header and section headers of each regular file
 * (no symlinks, hard links once), so a tree of tens of thousands of files
 * takes seconds; it does not use providers/elf.c because it judges it.
 *
 * Exit: 0 agree, 1 disagree (every difference printed on stdout),
 * 2 bad usage or unreadable input (stderr names the thing and the reason).
 */
#define _GNU_SOURCE
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdarg.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include "jsonl.h"

#define NC_SHOW_MAX 40          /* differences printed before eliding */

struct nsite {
	char    *ns_provider;
	char    *ns_name;
	char    *ns_args;
	char    *ns_path;       /* LIST only */
	uint64_t ns_pc;
	uint64_t ns_base;
	uint64_t ns_sema;       /* 0: none (LIST: null) */
	int      ns_sema_null;  /* LIST only: "semaphore":null */
	long     ns_pid;        /* LIST only, -1 absent */
	uint64_t ns_addr;       /* LIST -p only */
	int      ns_has_addr;
	uint64_t ns_sema_addr;
	int      ns_sema_addr_null;
	int      ns_has_sema_addr;
	long     ns_line;       /* LIST line, for messages */
	unsigned ns_keys;       /* LIST: NC_K_* seen */
};

#define NC_K_PC   1u
#define NC_K_BASE 2u
#define NC_K_SEMA 4u
#define NC_K_ALL  7u

struct nset {
	struct nsite *nv_v;
	size_t nv_n, nv_cap;
};

static long nc_ndiff;

static void die_oom(void)
{
	fprintf(stderr, "notecmp: out of memory\n");
	exit(2);
}

static char *xstrdup(const char *s)
{
	char *p = strdup(s);

	if (!p)
		die_oom();
	return p;
}

static struct nsite *nset_add(struct nset *s)
{
	if (s->nv_n == s->nv_cap) {
		size_t cap = s->nv_cap ? s->nv_cap * 2 : 64;
		struct nsite *v = realloc(s->nv_v, cap * sizeof(*v));

		if (!v)
			die_oom();
		s->nv_v = v;
		s->nv_cap = cap;
	}
	memset(&s->nv_v[s->nv_n], 0, sizeof(s->nv_v[0]));
	s->nv_v[s->nv_n].ns_pid = -1;
	return &s->nv_v[s->nv_n++];
}

static void nset_free(struct nset *s)
{
	for (size_t i = 0; i < s->nv_n; i++) {
		free(s->nv_v[i].ns_provider);
		free(s->nv_v[i].ns_name);
		free(s->nv_v[i].ns_args);
		free(s->nv_v[i].ns_path);
	}
	free(s->nv_v);
	memset(s, 0, sizeof(*s));
}

static void diff(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void diff(const char *fmt, ...)
{
	va_list ap;

	if (nc_ndiff++ >= NC_SHOW_MAX) {
		if (nc_ndiff == NC_SHOW_MAX + 1)
			printf("notecmp: ... further differences not shown\n");
		return;
	}
	va_start(ap, fmt);
	fputs("notecmp: ", stdout);
	vprintf(fmt, ap);
	fputc('\n', stdout);
	va_end(ap);
}

/* Strict hex/decimal u64: the whole string, no sign, no overflow. */
static int parse_u64(const char *s, uint64_t *v)
{
	char *end;

	if (!*s || *s == '-' || *s == '+' || *s == ' ')
		return -EINVAL;
	errno = 0;
	*v = strtoull(s, &end, 0);
	if (errno || *end)
		return -EINVAL;
	return 0;
}

/* ---- readelf -n ---------------------------------------------------------- */

/* Run readelf -n on @path; its stdout as a stream.  *pid for the reaper. */
static FILE *readelf_open(const char *path, pid_t *pid)
{
	int fd[2];
	FILE *f;

	if (pipe(fd) < 0)
		return NULL;
	*pid = fork();
	if (*pid < 0) {
		close(fd[0]);
		close(fd[1]);
		return NULL;
	}
	if (*pid == 0) {
		dup2(fd[1], 1);
		close(fd[0]);
		close(fd[1]);
		execlp("readelf", "readelf", "-n", "--", path, (char *)NULL);
		fprintf(stderr, "notecmp: readelf: %s\n", strerror(errno));
		_exit(127);
	}
	close(fd[1]);
	f = fdopen(fd[0], "r");
	if (!f)
		close(fd[0]);
	return f;
}

static int readelf_close(FILE *f, pid_t pid, const char *path)
{
	int st;

	fclose(f);
	if (waitpid(pid, &st, 0) < 0 || !WIFEXITED(st) || WEXITSTATUS(st)) {
		fprintf(stderr, "notecmp: '%s': readelf -n failed\n", path);
		return -EIO;
	}
	return 0;
}

/* "    Key: value\n" -> value (without the newline), or NULL. */
static const char *field(char *line, const char *key)
{
	size_t n = strlen(key);
	char *p = line;

	while (*p == ' ')
		p++;
	if (strncmp(p, key, n) || strncmp(p + n, ": ", 2))
		return NULL;
	p[strcspn(p, "\n")] = '\0';
	return p + n + 2;
}

/* "Location: 0x.., Base: 0x.., Semaphore: 0x.." */
static int parse_location(char *line, struct nsite *ns)
{
	const char *v = field(line, "Location");

	if (!v || sscanf(v, "%" SCNx64 ", Base: %" SCNx64 ", Semaphore: %" SCNx64,
			 &ns->ns_pc, &ns->ns_base, &ns->ns_sema) != 3)
		return -EBADMSG;
	return 0;
}

/*
 * Every NT_STAPSDT note readelf prints is a header line, then Provider, Name,
 * Location and Arguments lines (Arguments present even when empty:
 * "Arguments: ").  A note missing any of them is malformed for us.
 */
static int note_done(const char *path, struct nsite *ns, int seen)
{
	if (!ns || seen == 0xf)
		return 0;
	fprintf(stderr, "notecmp: '%s': unexpected readelf -n output for note %s:%s\n",
		path, ns->ns_provider ? ns->ns_provider : "?",
		ns->ns_name ? ns->ns_name : "?");
	return -EBADMSG;
}

static int readelf_notes(const char *path, struct nset *out)
{
	struct nsite *ns = NULL;
	char *line = NULL;
	size_t cap = 0;
	pid_t pid;
	int err = 0, seen = 0;
	FILE *f = readelf_open(path, &pid);

	if (!f) {
		fprintf(stderr, "notecmp: '%s': cannot run readelf: %s\n",
			path, strerror(errno));
		return -errno;
	}
	while (!err && getline(&line, &cap, f) > 0) {
		const char *v;

		if (strstr(line, "NT_STAPSDT")) {
			err = note_done(path, ns, seen);
			ns = nset_add(out);
			seen = 0;
		} else if (!ns || line[0] != ' ' || line[1] != ' ' || line[2] != ' ') {
			/* another note or section: the current note ends */
			err = note_done(path, ns, seen);
			ns = NULL;
		} else if ((v = field(line, "Provider")) && !(seen & 1)) {
			ns->ns_provider = xstrdup(v);
			seen |= 1;
		} else if ((v = field(line, "Name")) && !(seen & 2)) {
			ns->ns_name = xstrdup(v);
			seen |= 2;
		} else if (!(seen & 4) && !parse_location(line, ns)) {
			seen |= 4;
		} else if ((v = field(line, "Arguments")) && !(seen & 8)) {
			ns->ns_args = xstrdup(v);
			seen |= 8;
		} else {
			err = note_done(path, ns, 0);
		}
	}
	if (!err)
		err = note_done(path, ns, seen);
	free(line);
	if (readelf_close(f, pid, path) && !err)
		err = -EIO;
	return err;
}

/* ---- LIST: flat JSON objects, one per line --------------------------------- */

/* Hex address string, or null when @nullok. */
static int take_addr(const json_t *v, int nullok, uint64_t *out, int *isnull)
{
	const char *s = jsonl_string(v, NULL);

	if (json_is_null(v) && nullok) {
		*isnull = 1;
		*out = 0;
		return 0;
	}
	if (!s || strncmp(s, "0x", 2))
		return -EBADMSG;
	return parse_u64(s, out);
}

static int list_field(struct nsite *ns, const char *key, const json_t *v)
{
	int dummy;

	if (!strcmp(key, "provider") || !strcmp(key, "name") ||
	    !strcmp(key, "args") || !strcmp(key, "path")) {
		char **dst = !strcmp(key, "provider") ? &ns->ns_provider :
			     !strcmp(key, "name") ? &ns->ns_name :
			     !strcmp(key, "args") ? &ns->ns_args : &ns->ns_path;
		const char *str = jsonl_string(v, NULL);

		if (!str || *dst)
			return -EBADMSG;
		*dst = xstrdup(str);
		return 0;
	}
	if (!strcmp(key, "pc")) {
		ns->ns_keys |= NC_K_PC;
		return take_addr(v, 0, &ns->ns_pc, &dummy);
	}
	if (!strcmp(key, "base")) {
		ns->ns_keys |= NC_K_BASE;
		return take_addr(v, 0, &ns->ns_base, &dummy);
	}
	if (!strcmp(key, "semaphore")) {
		ns->ns_keys |= NC_K_SEMA;
		return take_addr(v, 1, &ns->ns_sema, &ns->ns_sema_null);
	}
	if (!strcmp(key, "addr")) {
		ns->ns_has_addr = 1;
		return take_addr(v, 0, &ns->ns_addr, &dummy);
	}
	if (!strcmp(key, "sema_addr")) {
		ns->ns_has_sema_addr = 1;
		return take_addr(v, 1, &ns->ns_sema_addr, &ns->ns_sema_addr_null);
	}
	if (!strcmp(key, "pid")) {
		const char *n = jsonl_number(v);
		char *end;

		if (!jsonl_is_integer(v))
			return -EBADMSG;
		ns->ns_pid = strtol(n, &end, 10);
		return *end || ns->ns_pid <= 0 ? -EBADMSG : 0;
	}
	return 0;       /* keys we do not judge */
}

/* One LIST line (jsonl.c): a flat object with at least the site's fields. */
static int list_line(const char *line, struct nsite *ns)
{
	struct jsonl_err e;
	const char *key;
	json_t *obj, *v;
	int err = 0;

	obj = jsonl_parse(line, &e);
	if (!obj)
		return -EBADMSG;
	json_object_foreach(obj, key, v) {
		err = json_is_object(v) || json_is_array(v) ? -EBADMSG :
		      list_field(ns, jsonl_key(key), v);
		if (err)
			break;
	}
	json_decref(obj);
	if (err)
		return err;
	if (!ns->ns_provider || !ns->ns_name || !ns->ns_args ||
	    ns->ns_keys != NC_K_ALL)
		return -EBADMSG;
	return 0;
}

static int list_read(const char *file, struct nset *out)
{
	FILE *f = fopen(file, "r");
	char *line = NULL;
	size_t cap = 0;
	long lineno = 0;
	int err = 0;

	if (!f) {
		fprintf(stderr, "notecmp: '%s': %s\n", file, strerror(errno));
		return -errno;
	}
	while (getline(&line, &cap, f) > 0) {
		struct nsite *ns;

		lineno++;
		if (!line[strspn(line, " \t\r\n")])
			continue;
		ns = nset_add(out);
		ns->ns_line = lineno;
		if (list_line(line, ns)) {
			fprintf(stderr, "notecmp: '%s' line %ld: not a probe site object"
				" (need provider, name, pc, base, semaphore, args)\n",
				file, lineno);
			err = -EBADMSG;
			break;
		}
	}
	free(line);
	fclose(f);
	return err;
}

/* ---- comparison -------------------------------------------------------- */

static int site_order(const void *a, const void *b)
{
	const struct nsite *x = a, *y = b;
	int c = strcmp(x->ns_provider, y->ns_provider);

	if (c)
		return c;
	if ((c = strcmp(x->ns_name, y->ns_name)))
		return c;
	if (x->ns_pc != y->ns_pc)
		return x->ns_pc < y->ns_pc ? -1 : 1;
	return strcmp(x->ns_args, y->ns_args);
}

static void site_fields(const char *obj, const struct nsite *r, const struct nsite *l)
{
	const char *who = l->ns_path ? l->ns_path : obj;

#define NC_HEX(what, a, b) \
	if ((a) != (b)) \
		diff("'%s' %s:%s: %s: readelf 0x%" PRIx64 " probecheck 0x%" PRIx64 \
		     " (list line %ld)", who, r->ns_provider, r->ns_name, what, \
		     (uint64_t)(a), (uint64_t)(b), l->ns_line)
	if (strcmp(r->ns_provider, l->ns_provider))
		diff("'%s' site %s:%s: provider: readelf '%s' probecheck '%s' (list line %ld)",
		     who, r->ns_provider, r->ns_name, r->ns_provider, l->ns_provider,
		     l->ns_line);
	if (strcmp(r->ns_name, l->ns_name))
		diff("'%s' site %s:%s: name: readelf '%s' probecheck '%s' (list line %ld)",
		     who, r->ns_provider, r->ns_name, r->ns_name, l->ns_name, l->ns_line);
	NC_HEX("pc", r->ns_pc, l->ns_pc);
	NC_HEX("base", r->ns_base, l->ns_base);
	NC_HEX("semaphore", r->ns_sema, l->ns_sema);
	if (!r->ns_sema && !l->ns_sema_null)
		diff("'%s' %s:%s: semaphore: readelf none, probecheck \"0x0\" instead of null"
		     " (list line %ld)", who, r->ns_provider, r->ns_name, l->ns_line);
	if (strcmp(r->ns_args, l->ns_args))
		diff("'%s' %s:%s: args: readelf '%s' probecheck '%s' (list line %ld)",
		     who, r->ns_provider, r->ns_name, r->ns_args, l->ns_args, l->ns_line);
#undef NC_HEX
}

static void site_show(const char *obj, const char *what, const struct nsite *s)
{
	diff("'%s' %s: %s:%s pc=0x%" PRIx64 " base=0x%" PRIx64 " semaphore=0x%"
	     PRIx64 " args='%s'", obj, what, s->ns_provider, s->ns_name,
	     s->ns_pc, s->ns_base, s->ns_sema, s->ns_args);
}

/* Merge two sorted lists by (provider, name, pc, args). */
static void sites_unmatched(const char *obj, struct nsite *r, size_t nr,
			    struct nsite *l, size_t nl)
{
	size_t i = 0, j = 0;

	while (i < nr || j < nl) {
		int c = i == nr ? 1 : j == nl ? -1 : site_order(&r[i], &l[j]);

		if (c == 0) {
			site_fields(obj, &r[i++], &l[j++]);
		} else if (c < 0) {
			site_show(obj, "missing from probecheck", &r[i++]);
		} else {
			site_show(obj, "not in readelf", &l[j++]);
		}
	}
}

/* Compare one object's notes.  Both arrays are sorted here. */
static void sites_compare(const char *obj, struct nsite *r, size_t nr,
			  struct nsite *l, size_t nl)
{
	if (nr > 1)	/* qsort(NULL, 0) is undefined: an empty side */
		qsort(r, nr, sizeof(*r), site_order);
	if (nl > 1)
		qsort(l, nl, sizeof(*l), site_order);
	if (nr != nl) {
		diff("'%s': readelf has %zu sites, probecheck %zu", obj, nr, nl);
		sites_unmatched(obj, r, nr, l, nl);
		return;
	}
	for (size_t i = 0; i < nr; i++)
		site_fields(obj, &r[i], &l[i]);
}

/* ---- raw ELF: section and program headers, no libelf ------------------- */

struct relf {
	Elf64_Ehdr re_eh;
	Elf64_Phdr *re_ph;
	Elf64_Shdr *re_sh;
	size_t re_nsh;
	char *re_shstr;
	size_t re_shstr_len;
};

static void relf_free(struct relf *e)
{
	free(e->re_ph);
	free(e->re_sh);
	free(e->re_shstr);
	memset(e, 0, sizeof(*e));
}

static int pread_all(int fd, void *buf, size_t n, off_t off)
{
	ssize_t got = pread(fd, buf, n, off);

	return got == (ssize_t)n ? 0 : -ENOEXEC;
}

static void *pread_new(int fd, size_t n, off_t off)
{
	void *p;

	if (!n || n > (64u << 20))
		return NULL;
	p = malloc(n + 1);
	if (!p)
		die_oom();
	if (pread_all(fd, p, n, off)) {
		free(p);
		return NULL;
	}
	((char *)p)[n] = '\0';
	return p;
}

/* Headers of an x86-64 ELF64 file: 0, or -ENOEXEC for anything else. */
static int relf_read(int fd, struct relf *e, int want_ph)
{
	Elf64_Ehdr *eh = &e->re_eh;
	Elf64_Shdr *str;

	memset(e, 0, sizeof(*e));
	if (pread_all(fd, eh, sizeof(*eh), 0) ||
	    memcmp(eh->e_ident, ELFMAG, SELFMAG) ||
	    eh->e_ident[EI_CLASS] != ELFCLASS64 ||
	    eh->e_machine != EM_X86_64 || eh->e_shentsize != sizeof(Elf64_Shdr))
		return -ENOEXEC;
	e->re_nsh = eh->e_shnum;
	if (!e->re_nsh && eh->e_shoff) {
		Elf64_Shdr first;

		if (pread_all(fd, &first, sizeof(first), eh->e_shoff))
			return -ENOEXEC;
		e->re_nsh = first.sh_size;
	}
	e->re_sh = pread_new(fd, e->re_nsh * sizeof(Elf64_Shdr), eh->e_shoff);
	if (!e->re_sh)
		goto bad;
	if (eh->e_shstrndx >= e->re_nsh && eh->e_shstrndx != SHN_XINDEX)
		goto bad;
	str = &e->re_sh[eh->e_shstrndx == SHN_XINDEX ? e->re_sh[0].sh_link
						       : eh->e_shstrndx];
	if ((size_t)(str - e->re_sh) >= e->re_nsh)
		goto bad;
	e->re_shstr = pread_new(fd, str->sh_size, str->sh_offset);
	e->re_shstr_len = str->sh_size;
	if (!e->re_shstr)
		goto bad;
	if (want_ph) {
		if (eh->e_phentsize != sizeof(Elf64_Phdr))
			goto bad;
		e->re_ph = pread_new(fd, eh->e_phnum * sizeof(Elf64_Phdr), eh->e_phoff);
		if (!e->re_ph)
			goto bad;
	}
	return 0;
bad:
	relf_free(e);
	return -ENOEXEC;
}

static const Elf64_Shdr *relf_section(const struct relf *e, const char *name)
{
	for (size_t i = 0; i < e->re_nsh; i++) {
		uint32_t n = e->re_sh[i].sh_name;

		if (n < e->re_shstr_len && !strcmp(e->re_shstr + n, name))
			return &e->re_sh[i];
	}
	return NULL;
}

/* Link-time vaddr -> file offset through the PT_LOAD that holds it. */
static int relf_vaddr_off(const struct relf *e, uint64_t va, uint64_t *off)
{
	for (int i = 0; i < e->re_eh.e_phnum; i++) {
		const Elf64_Phdr *ph = &e->re_ph[i];

		if (ph->p_type == PT_LOAD && va >= ph->p_vaddr &&
		    va < ph->p_vaddr + ph->p_filesz) {
			*off = va - ph->p_vaddr + ph->p_offset;
			return 0;
		}
	}
	return -ERANGE;
}

/* ---- --scan ------------------------------------------------------------ */

static struct { dev_t d; ino_t i; } *scan_seen;
static size_t scan_nseen, scan_capseen;

static int scan_seen_before(const struct stat *st)
{
	for (size_t k = 0; k < scan_nseen; k++)
		if (scan_seen[k].d == st->st_dev && scan_seen[k].i == st->st_ino)
			return 1;
	if (scan_nseen == scan_capseen) {
		scan_capseen = scan_capseen ? scan_capseen * 2 : 64;
		scan_seen = realloc(scan_seen, scan_capseen * sizeof(*scan_seen));
		if (!scan_seen)
			die_oom();
	}
	scan_seen[scan_nseen].d = st->st_dev;
	scan_seen[scan_nseen++].i = st->st_ino;
	return 0;
}

static int has_stapsdt(const char *path)
{
	struct relf e;
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
	int yes = 0;

	if (fd < 0)
		return 0;
	if (!relf_read(fd, &e, 0)) {
		yes = relf_section(&e, ".note.stapsdt") != NULL;
		relf_free(&e);
	}
	close(fd);
	return yes;
}

static int scan_one(const char *path, const struct stat *st, int type,
		    struct FTW *ftw)
{
	if (type != FTW_F || !S_ISREG(st->st_mode) || st->st_size < 64)
		return 0;
	if (has_stapsdt(path) && !scan_seen_before(st))
		printf("%s\n", path);
	return 0;
}

static int cmd_scan(int argc, char **argv)
{
	int rc = 0;

	for (int i = 0; i < argc; i++) {
		struct stat st;

		if (stat(argv[i], &st) < 0)
			continue;       /* /usr/lib/jvm may not exist */
		if (nftw(argv[i], scan_one, 32, FTW_PHYS | FTW_MOUNT) < 0) {
			fprintf(stderr, "notecmp: '%s': cannot walk: %s\n",
				argv[i], strerror(errno));
			rc = 2;
		}
	}
	free(scan_seen);
	return rc;
}

/* ---- FILE mode ----------------------------------------------------------- */

static int cmd_file(const char *file, const char *list)
{
	struct nset r = { 0 }, l = { 0 };
	int rc = 2;

	if (readelf_notes(file, &r) || list_read(list, &l))
		goto out;
	if (!r.nv_n) {
		fprintf(stderr, "notecmp: '%s': readelf shows no stapsdt notes\n", file);
		goto out;
	}
	sites_compare(file, r.nv_v, r.nv_n, l.nv_v, l.nv_n);
	printf("notecmp: '%s': %zu sites from readelf, %zu from probecheck, %ld differences\n",
	       file, r.nv_n, l.nv_n, nc_ndiff);
	rc = nc_ndiff ? 1 : 0;
out:
	nset_free(&r);
	nset_free(&l);
	return rc;
}

/* ---- PID mode ------------------------------------------------------------ */

struct nmap {
	uint64_t nm_start, nm_end, nm_off;
	char    *nm_path;
};

struct nmaps {
	struct nmap *mp_v;
	size_t mp_n, mp_cap;
};

static void nmaps_free(struct nmaps *m)
{
	for (size_t i = 0; i < m->mp_n; i++)
		free(m->mp_v[i].nm_path);
	free(m->mp_v);
}

static int maps_read(long pid, struct nmaps *m)
{
	char file[64], *line = NULL;
	size_t cap = 0;
	FILE *f;

	snprintf(file, sizeof(file), "/proc/%ld/maps", pid);
	f = fopen(file, "r");
	if (!f) {
		fprintf(stderr, "notecmp: '%s': %s\n", file, strerror(errno));
		return -errno;
	}
	while (getline(&line, &cap, f) > 0) {
		struct nmap *nm;
		unsigned long long s, e, o;
		int pos = 0;
		char *p;

		if (sscanf(line, "%llx-%llx %*s %llx %*s %*s %n", &s, &e, &o, &pos) < 3 ||
		    !pos || line[pos] != '/')
			continue;
		if (m->mp_n == m->mp_cap) {
			m->mp_cap = m->mp_cap ? m->mp_cap * 2 : 64;
			m->mp_v = realloc(m->mp_v, m->mp_cap * sizeof(*m->mp_v));
			if (!m->mp_v)
				die_oom();
		}
		nm = &m->mp_v[m->mp_n++];
		p = line + pos;
		p[strcspn(p, "\n")] = '\0';
		nm->nm_path = xstrdup(p);
		nm->nm_start = s;
		nm->nm_end = e;
		nm->nm_off = o;
	}
	free(line);
	fclose(f);
	return 0;
}

/* Runtime address of file offset @off of @path in the process, or 0. */
static uint64_t maps_addr(const struct nmaps *m, const char *path, uint64_t off)
{
	for (size_t i = 0; i < m->mp_n; i++) {
		const struct nmap *nm = &m->mp_v[i];

		if (!strcmp(nm->nm_path, path) && off >= nm->nm_off &&
		    off < nm->nm_off + (nm->nm_end - nm->nm_start))
			return nm->nm_start + (off - nm->nm_off);
	}
	return 0;
}

/* The note's pc or semaphore after the .stapsdt.base (prelink) shift. */
static uint64_t adjusted(const struct relf *e, const struct nsite *r, uint64_t va)
{
	const Elf64_Shdr *b = relf_section(e, ".stapsdt.base");

	if (b && b->sh_addr && r->ns_base)
		return va + b->sh_addr - r->ns_base;
	return va;
}

static void runtime_check(const char *path, const struct relf *e,
			  const struct nmaps *m, const struct nsite *r,
			  const struct nsite *l)
{
	uint64_t off, want;

	if (!l->ns_has_addr) {
		diff("'%s' %s:%s: no \"addr\" (list line %ld)", path, r->ns_provider,
		     r->ns_name, l->ns_line);
		return;
	}
	if (relf_vaddr_off(e, adjusted(e, r, r->ns_pc), &off)) {
		diff("'%s' %s:%s: pc 0x%" PRIx64 " in no PT_LOAD", path,
		     r->ns_provider, r->ns_name, r->ns_pc);
		return;
	}
	want = maps_addr(m, path, off);
	if (want != l->ns_addr)
		diff("'%s' %s:%s: addr: /proc/PID/maps gives 0x%" PRIx64
		     " (file offset 0x%" PRIx64 "), probecheck 0x%" PRIx64
		     " (list line %ld)", path, r->ns_provider, r->ns_name, want,
		     off, l->ns_addr, l->ns_line);
	if (!r->ns_sema) {
		if (!l->ns_has_sema_addr || !l->ns_sema_addr_null)
			diff("'%s' %s:%s: sema_addr: no semaphore, want null (list line %ld)",
			     path, r->ns_provider, r->ns_name, l->ns_line);
		return;
	}
	if (relf_vaddr_off(e, adjusted(e, r, r->ns_sema), &off)) {
		diff("'%s' %s:%s: semaphore 0x%" PRIx64 " in no PT_LOAD", path,
		     r->ns_provider, r->ns_name, r->ns_sema);
		return;
	}
	want = maps_addr(m, path, off);
	if (!l->ns_has_sema_addr || l->ns_sema_addr_null || want != l->ns_sema_addr)
		diff("'%s' %s:%s: sema_addr: /proc/PID/maps gives 0x%" PRIx64
		     ", probecheck %s0x%" PRIx64 " (list line %ld)", path,
		     r->ns_provider, r->ns_name, want,
		     l->ns_has_sema_addr && !l->ns_sema_addr_null ? "" : "none ",
		     l->ns_sema_addr, l->ns_line);
}

static int path_order(const void *a, const void *b)
{
	const struct nsite *x = a, *y = b;
	int c = strcmp(x->ns_path ? x->ns_path : "", y->ns_path ? y->ns_path : "");

	return c ? c : site_order(a, b);
}

/* One object of the process: notes, then runtime addresses. */
static int pid_object(long pid, const char *path, const struct nmaps *m,
		      struct nsite *l, size_t nl)
{
	char rooted[4096];
	struct nset r = { 0 };
	struct relf e;
	int fd, err;

	snprintf(rooted, sizeof(rooted), "/proc/%ld/root%s", pid, path);
	if ((err = readelf_notes(rooted, &r)))
		goto out;
	sites_compare(path, r.nv_v, r.nv_n, l, nl);
	fd = open(rooted, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || relf_read(fd, &e, 1)) {
		fprintf(stderr, "notecmp: '%s': cannot read ELF headers\n", rooted);
		err = -ENOEXEC;
		if (fd >= 0)
			close(fd);
		goto out;
	}
	close(fd);
	/* sites_compare sorted both sides: pairs line up when counts agree */
	for (size_t i = 0; i < r.nv_n && r.nv_n == nl; i++)
		runtime_check(path, &e, m, &r.nv_v[i], &l[i]);
	relf_free(&e);
out:
	nset_free(&r);
	return err;
}

static int listed(const struct nset *l, const char *path)
{
	for (size_t i = 0; i < l->nv_n; i++)
		if (l->nv_v[i].ns_path && !strcmp(l->nv_v[i].ns_path, path))
			return 1;
	return 0;
}

/* Every mapped object with notes must be in LIST; each path once. */
static size_t pid_mapped_objects(long pid, const struct nmaps *m, const struct nset *l)
{
	size_t n = 0;

	for (size_t i = 0; i < m->mp_n; i++) {
		const char *p = m->mp_v[i].nm_path;
		char rooted[4096];
		size_t k;

		for (k = 0; k < i && strcmp(m->mp_v[k].nm_path, p); k++)
			;
		if (k < i)
			continue;
		snprintf(rooted, sizeof(rooted), "/proc/%ld/root%s", pid, p);
		if (!has_stapsdt(rooted))
			continue;
		n++;
		if (!listed(l, p))
			diff("'%s': mapped in pid %ld with a .note.stapsdt section,"
			     " but probecheck lists none of its sites", p, pid);
	}
	return n;
}

static int cmd_pid(const char *pidstr, const char *list)
{
	struct nset l = { 0 };
	struct nmaps m = { 0 };
	size_t nobj = 0, nmapped;
	char *end;
	long pid = strtol(pidstr, &end, 10);
	int rc = 2;

	if (*end || pid <= 0) {
		fprintf(stderr, "notecmp: '%s': not a pid\n", pidstr);
		return 2;
	}
	if (list_read(list, &l) || maps_read(pid, &m))
		goto out;
	for (size_t i = 0; i < l.nv_n; i++) {
		if (l.nv_v[i].ns_pid != pid)
			diff("list line %ld: pid %ld, want %ld", l.nv_v[i].ns_line,
			     l.nv_v[i].ns_pid, pid);
		if (!l.nv_v[i].ns_path) {
			fprintf(stderr, "notecmp: '%s' line %ld: no \"path\"\n", list,
				l.nv_v[i].ns_line);
			goto out;
		}
	}
	if (l.nv_n > 1)
		qsort(l.nv_v, l.nv_n, sizeof(l.nv_v[0]), path_order);
	for (size_t i = 0, j; i < l.nv_n; i = j) {
		for (j = i; j < l.nv_n && !strcmp(l.nv_v[j].ns_path, l.nv_v[i].ns_path); j++)
			;
		nobj++;
		if (pid_object(pid, l.nv_v[i].ns_path, &m, &l.nv_v[i], j - i))
			goto out;
	}
	nmapped = pid_mapped_objects(pid, &m, &l);
	printf("notecmp: pid %ld: %zu objects with notes mapped, %zu objects and %zu sites"
	       " from probecheck, %ld differences\n", pid, nmapped, nobj, l.nv_n, nc_ndiff);
	rc = nc_ndiff ? 1 : 0;
out:
	nmaps_free(&m);
	nset_free(&l);
	return rc;
}

static int usage(void)
{
	fprintf(stderr, "usage: notecmp FILE LIST | notecmp -p PID LIST |"
		" notecmp --scan DIR...\n");
	return 2;
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc >= 2 && !strcmp(argv[1], "--scan"))
		return cmd_scan(argc - 2, argv + 2);
	if (argc == 4 && !strcmp(argv[1], "-p"))
		return cmd_pid(argv[2], argv[3]);
	if (argc == 3 && argv[1][0] != '-')
		return cmd_file(argv[1], argv[2]);
	return usage();
}
