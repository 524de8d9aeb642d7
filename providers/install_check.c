/*
 * install_check.c — did the kernel really install every site?
 *
 * A uprobe is registered by (inode, offset).  When the object is already
 * mapped in a process the filter accepts, registration installs the int3
 * at once, analysing the instruction first (arch_uprobe_analyze_insn), and
 * fails with ENOTSUPP (524) if the decoder refuses it.  When the object is
 * mapped later (-c before exec, a library named by path before dlopen,
 * --follow and -a before any process maps it), registration succeeds with
 * nothing to install, and uprobe_mmap() installs at mmap time, ignoring
 * every error: a refused site is dropped in silence and never fires
 * (seen on 6.18 with a 10-byte cs nopw, and on ds- and lock-prefixed
 * instructions).  A tracer that claims all-or-nothing attach must not
 * report success then.
 *
 * The decoder's verdict belongs to the instruction, not to the process,
 * so it can be observed in any mm the uprobe's filter accepts: map the
 * object there (private, read + exec: a mapping uprobe_mmap() installs
 * into) and read the site's first byte.  int3 means installed; the file's
 * own byte means the kernel dropped the site.  Where that mm is:
 *   - system-wide sites (-a, --follow): the tracer's own;
 *   - -c: the child before it execs the command (the sites' filter is its
 *     pid), which runs install_check_here() when told to;
 *   - -p: the target's mm cannot be used, so install_check_pid() adds a
 *     uprobe for the tracer's own pid at each site whose object the
 *     target has not mapped (a site in a mapped object failed at
 *     registration already), checks, and removes them.
 * A site whose file byte is 0xcc cannot be told apart this way; the kernel
 * never probes an int3 (is_trap_insn), so it is reported as refused.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include "install_check.h"
#include "log.h"
#include "procmaps.h"
#include "uprobe_pmu.h"

struct ic_map {
	dev_t im_dev;
	ino_t im_ino;
	unsigned char *im_base;
	size_t im_len;
	int im_fd;
};

struct ic_maps {
	struct ic_map *ims_v;
	size_t ims_n;
};

static void maps_free(struct ic_maps *m)
{
	for (size_t i = 0; i < m->ims_n; i++) {
		munmap(m->ims_v[i].im_base, m->ims_v[i].im_len);
		close(m->ims_v[i].im_fd);
	}
	free(m->ims_v);
}

static unsigned long ic_mapped;

unsigned long install_check_mappings(void)
{
	return ic_mapped;
}

/* The mapping of @path, made on first use. */
static int map_object(struct ic_maps *m, const char *path,
		      struct ic_map **out)
{
	struct ic_map *v;
	struct stat sb;
	void *base;
	int fd = open(path, O_RDONLY | O_CLOEXEC), err;

	if (fd < 0 || fstat(fd, &sb)) {
		err = -errno;
		pc_err("install check: '%s': %s", path, pc_strerror(-err));
		if (fd >= 0)
			close(fd);
		return err;
	}
	for (size_t i = 0; i < m->ims_n; i++)
		if (m->ims_v[i].im_dev == sb.st_dev &&
		    m->ims_v[i].im_ino == sb.st_ino) {
			close(fd);
			*out = &m->ims_v[i];
			return 0;
		}
	base = mmap(NULL, sb.st_size, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, 0);
	v = base == MAP_FAILED ? NULL
	    : realloc(m->ims_v, (m->ims_n + 1) * sizeof(*v));
	if (!v) {
		err = base == MAP_FAILED ? -errno : -ENOMEM;
		pc_err("install check: cannot map '%s': %s", path,
		       pc_strerror(-err));
		if (base != MAP_FAILED)
			munmap(base, sb.st_size);
		close(fd);
		return err;
	}
	m->ims_v = v;
	ic_mapped++;
	v[m->ims_n] = (struct ic_map){ sb.st_dev, sb.st_ino, base,
				       (size_t)sb.st_size, fd };
	*out = &v[m->ims_n++];
	return 0;
}

/* One site: 0 installed, -PC_ENOTSUPP dropped (said), -errno if unknown. */
static int check_site(struct ic_maps *m, const struct site *st)
{
	unsigned char file[5] = { 0 };
	struct ic_map *im = NULL;
	int err = map_object(m, st->st_open_path, &im);

	if (err)
		return err;
	if (st->st_off >= im->im_len) {
		pc_err("install check: '%s': offset 0x%llx beyond the file",
		       st->st_path, (unsigned long long)st->st_off);
		return -EINVAL;
	}
	if (pread(im->im_fd, file, sizeof(file), st->st_off) < 1)
		return -EIO;
	if (im->im_base[st->st_off] == 0xcc && file[0] != 0xcc)
		return 0;
	pc_err("uprobe: '%s' offset 0x%llx (%s:%s): not installed when the "
	       "object was mapped: %s; the instruction there: %02x %02x %02x "
	       "%02x %02x", st->st_path, (unsigned long long)st->st_off,
	       st->st_provider, st->st_name,
	       pc_site_strerror(PC_ENOTSUPP), file[0], file[1], file[2],
	       file[3], file[4]);
	return -PC_ENOTSUPP;
}

int install_check_here(const struct site_set *ss, size_t first,
		       const unsigned char *only)
{
	struct ic_maps m = { NULL, 0 };
	int err = 0, e;

	for (size_t i = first; i < ss->ss_n; i++) {
		if (only && !only[i - first])
			continue;
		e = check_site(&m, &ss->ss_v[i]);
		if (e && (!err || err == -PC_ENOTSUPP))
			err = e;        /* every refused site is named */
		if (e && e != -PC_ENOTSUPP)
			break;
	}
	maps_free(&m);
	return err;
}

/* Is the object of @st among @pm (by device and inode)?  1, 0, -errno. */
static int mapped_in(const struct site *st, const struct pm_objects *pm)
{
	struct stat sb;

	if (stat(st->st_open_path, &sb))
		return -errno;
	for (size_t i = 0; i < pm->po_n; i++)
		if (pm->po_v[i].po_dev == sb.st_dev &&
		    pm->po_v[i].po_ino == sb.st_ino)
			return 1;
	return 0;
}

int install_check_pid(const struct site_set *ss, size_t first, pid_t pid)
{
	size_t n = ss->ss_n - first, k = 0;
	unsigned char *only = calloc(n ? n : 1, 1);
	int *fds = malloc((n ? n : 1) * sizeof(*fds));
	struct pm_objects pm = { NULL, 0 };
	int err = only && fds ? procmaps_read(pid, PM_NOBIAS, &pm) : -ENOMEM, any = 0;

	for (; k < n && !err; k++) {
		const struct site *st = &ss->ss_v[first + k];
		int r = mapped_in(st, &pm);

		fds[k] = -1;
		if (r < 0)
			err = r;
		else if (!r) {
			only[k] = any = 1;
			fds[k] = uprobe_pmu_open(st->st_open_path, st->st_off,
						 st->st_sema_off, 0, getpid());
			if (fds[k] < 0)
				err = fds[k];
		}
	}
	if (!err && any)
		err = install_check_here(ss, first, only);
	else if (err)
		pc_err("install check: pid %d: %s", pid, pc_strerror(-err));
	while (fds && k--)
		if (fds[k] >= 0)
			close(fds[k]);
	procmaps_free(&pm);
	free(only);
	free(fds);
	return err;
}
