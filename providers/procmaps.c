/*
 * procmaps.c — the ELF objects a process has mapped, from /proc/PID/maps.
 *
 *   55d4c7a00000-55d4c7a02000 r--p 00000000 08:01 1835041   /usr/bin/fx_basic
 *   55d4c7a02000-55d4c7a03000 r-xp 00002000 08:01 1835041   /usr/bin/fx_basic
 *
 * One object is one (dev, inode): the same file may appear under several
 * names (hard links) and is mapped once per PT_LOAD.  The lowest mapping
 * of an object is the start of its first PT_LOAD, which together with its
 * file offset gives the load bias (elf_obj_load_bias).  Only objects with
 * an executable mapping can hold a probe site, so only those are returned.
 *
 * Skipped: anonymous memory and pseudo-files ([heap], [vdso], ...), which
 * have inode 0 or no path; mapped files that are not ELF.
 *
 * A file deleted since it was mapped (its path ends in " (deleted)" and
 * names nothing, or another file, on disk) and a memfd ("/memfd:NAME
 * (deleted)") are opened through /proc/PID/map_files/START-END, the
 * mapping itself: the kernel resolves that link to the mapped inode, for
 * reading it here as for a uprobe on it.  Root only (CAP_SYS_ADMIN), as
 * tracing is.
 *
 * Quirk: a file the process mmap()s itself (to read it, not to run it) is
 * indistinguishable here from a loaded segment; if that mapping is below
 * the loaded ones, the bias is wrong.  The dynamic loader places objects
 * before the program can map anything, so this needs a deliberate mmap at
 * a low address.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "procmaps.h"
#include "elf.h"
#include "log.h"

#define DELETED_SUFFIX " (deleted)"

struct pm_map {
	uint64_t pm_start, pm_end, pm_off;
	unsigned long pm_dev, pm_ino;
	int      pm_exec;
	const char *pm_path;    /* points into the line buffer */
};

/* Object bookkeeping while reading: po_* plus whether any map is r-x. */
struct pm_acc {
	struct pm_objects *pa_out;
	size_t   pa_cap;
	int     *pa_exec;       /* parallel to pa_out->po_v */
};

static int pm_parse_line(char *line, struct pm_map *m)
{
	unsigned long long start, end, off, ino;
	unsigned int major, minor;
	char perms[5];
	int pos = -1;
	size_t len;

	/* perms is "rwxp" or the like, always 4: a shorter one left
	 * perms[2], read below, unset. */
	if (sscanf(line, "%llx-%llx %4s %llx %x:%x %llu %n", &start, &end,
		   perms, &off, &major, &minor, &ino, &pos) < 7 || pos < 0 ||
	    strlen(perms) != 4)
		return -EINVAL;
	len = strlen(line);
	if (len && line[len - 1] == '\n')
		line[--len] = '\0';
	m->pm_start = start;
	m->pm_end = end;
	m->pm_off = off;
	m->pm_dev = makedev(major, minor);
	m->pm_ino = ino;
	m->pm_exec = perms[2] == 'x';
	m->pm_path = line + pos;
	return 0;
}

static int pm_is_deleted(const char *path)
{
	size_t n = strlen(path), k = strlen(DELETED_SUFFIX);

	return n > k && !strcmp(path + n - k, DELETED_SUFFIX);
}

static struct pm_object *pm_find_ino(struct pm_objects *o, unsigned long dev,
				     unsigned long ino, size_t *idx)
{
	size_t i;

	for (i = 0; i < o->po_n; i++) {
		if (o->po_v[i].po_dev == dev && o->po_v[i].po_ino == ino) {
			*idx = i;
			return &o->po_v[i];
		}
	}
	return NULL;
}

static int pm_acc_add(struct pm_acc *pa, pid_t pid, const struct pm_map *m)
{
	struct pm_objects *o = pa->pa_out;
	struct pm_object *po;
	size_t i;

	po = pm_find_ino(o, m->pm_dev, m->pm_ino, &i);
	if (po) {
		if (m->pm_start < po->po_start) {
			po->po_start = m->pm_start;
			po->po_off = m->pm_off;
		}
		pa->pa_exec[i] |= m->pm_exec;
		return 0;
	}
	if (o->po_n == pa->pa_cap) {
		size_t ncap = pa->pa_cap ? pa->pa_cap * 2 : 32;
		struct pm_object *v = realloc(o->po_v, ncap * sizeof(*v));
		int *x;

		if (!v)
			return -ENOMEM;
		o->po_v = v;
		x = realloc(pa->pa_exec, ncap * sizeof(*x));
		if (!x)
			return -ENOMEM;
		pa->pa_exec = x;
		pa->pa_cap = ncap;
	}
	po = &o->po_v[o->po_n];
	memset(po, 0, sizeof(*po));
	po->po_path = strdup(m->pm_path);
	if (!po->po_path ||
	    (pm_is_deleted(m->pm_path) ?
	     asprintf(&po->po_open_path, "/proc/%d/map_files/%llx-%llx", (int)pid,
		      (unsigned long long)m->pm_start, (unsigned long long)m->pm_end) :
	     asprintf(&po->po_open_path, "/proc/%d/root%s", (int)pid, m->pm_path)) < 0) {
		free(po->po_path);
		return -ENOMEM;
	}
	po->po_start = m->pm_start;
	po->po_off = m->pm_off;
	po->po_dev = m->pm_dev;
	po->po_ino = m->pm_ino;
	pa->pa_exec[o->po_n++] = m->pm_exec;
	return 0;
}

static void pm_object_clear(struct pm_object *po)
{
	free(po->po_path);
	free(po->po_open_path);
}

/* Every line of @f into @pa; @name (the file) for messages. */
static int pm_read_lines(FILE *f, pid_t pid, int quiet, const char *name,
			 struct pm_acc *pa)
{
	char *line = NULL;
	size_t cap = 0;
	ssize_t got;
	int err = 0;

	errno = 0;
	while ((got = getline(&line, &cap, f)) > 0) {
		struct pm_map m;

		if (pm_parse_line(line, &m)) {
			pc_err_unless(quiet, "procmaps: pid %d: unparsable line in %s: %s",
			       (int)pid, name, line);
			err = -EINVAL;
			goto out;
		}
		if (!m.pm_ino || m.pm_path[0] != '/')
			continue;
		err = pm_acc_add(pa, pid, &m);
		if (err)
			goto out;
	}
	/* getline's -1 is the end, an error, or no memory for the line: the
	 * last is neither, and must not pass for a shorter file. */
	if (got < 0 && errno == ENOMEM && !feof(f) && !ferror(f)) {
		err = -ENOMEM;
		goto out;
	}
	/* A process that exits while we read leaves a short, valid file. */
	if (ferror(f)) {
		err = errno == ESRCH ? -ESRCH : -EIO;
		pc_err_unless(quiet, "procmaps: pid %d: reading %s failed", (int)pid, name);
	}
out:
	free(line);
	return err;
}

int procmaps_parse(FILE *f, pid_t pid, unsigned flags, const char *name,
		   struct pm_objects *out)
{
	struct pm_acc pa = { .pa_out = out };
	size_t i, n = 0;
	int err;

	memset(out, 0, sizeof(*out));
	err = pm_read_lines(f, pid, !!(flags & PM_QUIET), name, &pa);
	if (err) {
		free(pa.pa_exec);
		procmaps_free(out);
		return err;
	}
	for (i = 0; i < out->po_n; i++) {
		if (!pa.pa_exec[i]) {
			pm_object_clear(&out->po_v[i]);
			continue;
		}
		out->po_v[n++] = out->po_v[i];
	}
	out->po_n = n;
	free(pa.pa_exec);
	return 0;
}

/* Cheap magic check so non-ELF mappings are skipped without an error:
 * 1, 0 (not ELF, unreadable), -ENOMEM (stdio could not allocate). */
static int pm_is_elf(const char *path)
{
	unsigned char id[SELFMAG];
	FILE *f = fopen(path, "re");
	int ok;

	if (!f)
		return errno == ENOMEM ? -ENOMEM : 0;
	ok = fread(id, 1, sizeof(id), f) == sizeof(id) &&
	     !memcmp(id, ELFMAG, SELFMAG);
	fclose(f);
	return ok;
}

/* 0: keep @po with its bias set; 1: drop it; -ENOMEM. */
static int pm_object_bias(pid_t pid, int quiet, struct pm_object *po)
{
	struct elf_obj *eo;
	int err = pm_is_elf(po->po_open_path);

	if (err < 0)
		return err;
	if (!err) {
		pc_dbg("procmaps: pid %d: skipping '%s': not ELF or unreadable",
		       (int)pid, po->po_path);
		return 1;
	}
	/* Out of memory is ours, not the object's: the process is not read. */
	err = elf_obj_open(po->po_open_path, quiet ? ELF_QUIET : 0, &eo);
	if (err)
		return err == -ENOMEM ? err : 1;
	err = elf_obj_load_bias(eo, po->po_start, po->po_off, &po->po_bias);
	elf_obj_close(eo);
	if (err) {
		pc_dbg("procmaps: pid %d: skipping '%s': mapping at offset 0x%llx is in no PT_LOAD",
		       (int)pid, po->po_path, (unsigned long long)po->po_off);
		return 1;
	}
	return 0;
}

int procmaps_read(pid_t pid, unsigned flags, struct pm_objects *out)
{
	int quiet = !!(flags & PM_QUIET);
	char path[64];
	size_t i, n = 0;
	FILE *f;
	int err;

	memset(out, 0, sizeof(*out));
	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	f = fopen(path, "re");
	if (!f) {
		err = errno == ENOENT ? -ESRCH : -errno;
		pc_err_unless(quiet, "procmaps: pid %d: %s", (int)pid, err == -ESRCH ?
		       "no such process" : pc_strerror(-err));
		return err;
	}
	err = procmaps_parse(f, pid, flags, path, out);
	fclose(f);
	if (err || (flags & PM_NOBIAS))
		return err;
	for (i = 0; i < out->po_n; i++) {
		struct pm_object *po = &out->po_v[i];

		err = pm_object_bias(pid, quiet, po);
		if (err < 0) {
			pc_err_unless(quiet, "procmaps: pid %d: %s", (int)pid, pc_strerror(-err));
			while (i < out->po_n)
				pm_object_clear(&out->po_v[i++]);
			out->po_n = n;
			procmaps_free(out);
			return err;
		}
		if (err) {
			pm_object_clear(po);
			continue;
		}
		out->po_v[n++] = *po;
	}
	out->po_n = n;
	return 0;
}

void procmaps_free(struct pm_objects *o)
{
	size_t i;

	for (i = 0; i < o->po_n; i++)
		pm_object_clear(&o->po_v[i]);
	free(o->po_v);
	o->po_v = NULL;
	o->po_n = 0;
}

const struct pm_object *procmaps_find(const struct pm_objects *o,
				      const char *path)
{
	size_t i;

	for (i = 0; i < o->po_n; i++)
		if (!strcmp(o->po_v[i].po_path, path))
			return &o->po_v[i];
	return NULL;
}

/*
 * Whole lines (getline): a path longer than a fixed buffer would be read
 * in pieces, and a piece of a path can read as a mapping of its own.
 */
int procmaps_self_offset(const void *addr, uint64_t *off)
{
	uintptr_t want = (uintptr_t)addr;
	unsigned long lo, hi, pgoff;
	char *line = NULL;
	size_t cap = 0;
	FILE *f = fopen("/proc/self/maps", "re");
	int err = -ENOENT;

	if (!f)
		return -errno;
	errno = 0;
	while (getline(&line, &cap, f) > 0)
		if (sscanf(line, "%lx-%lx %*s %lx", &lo, &hi, &pgoff) == 3 &&
		    want >= lo && want < hi) {
			*off = want - lo + pgoff;
			err = 0;
			break;
		}
	if (err && errno == ENOMEM)
		err = -ENOMEM;
	free(line);
	fclose(f);
	return err;
}
