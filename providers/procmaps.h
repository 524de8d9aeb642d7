/*
 * procmaps.h — which ELF objects a process maps, and where.
 *
 * For -p PID every file-backed executable mapping in /proc/PID/maps is a
 * candidate object.  Paths are opened through /proc/PID/root so a process
 * in another mount namespace or chroot is read correctly.
 */
#ifndef PC_PROCMAPS_H
#define PC_PROCMAPS_H

#include <stdint.h>
#include <stddef.h>
#include <stdio.h>
#include <sys/types.h>

struct pm_object {
	char    *po_path;       /* path as the process sees it */
	char    *po_open_path;  /* /proc/PID/root + po_path, or for a deleted
				 * file /proc/PID/map_files/START-END */
	uint64_t po_start;      /* lowest mapping of the object */
	uint64_t po_off;        /* file offset of that mapping */
	uint64_t po_bias;       /* runtime - link-time address, 0 if unknown */
	unsigned long po_dev;
	unsigned long po_ino;
};

struct pm_objects {
	struct pm_object *po_v;
	size_t po_n;
};

/* A process that may be gone by now: no message about it. */
#define PM_QUIET 1u
/*
 * Which objects are mapped, not where: no object is opened for its load
 * bias (po_bias 0) and none is dropped for not being ELF.  libelf turns
 * some allocation failures into "corrupt ELF file", which would drop an
 * object the process does map.
 */
#define PM_NOBIAS 2u
/* 0, -ESRCH (no such process), or -errno with a message unless PM_QUIET. */
int  procmaps_read(pid_t pid, unsigned flags, struct pm_objects *out);
void procmaps_free(struct pm_objects *o);
/*
 * The first half of procmaps_read, on text already opened: every object
 * of @pid with an executable mapping in @f (the format of /proc/PID/maps;
 * @name names it in messages), po_bias 0: the objects are not opened.
 * 0, -EINVAL (a line it cannot parse), -ENOMEM, -EIO/-ESRCH (reading).
 */
int  procmaps_parse(FILE *f, pid_t pid, unsigned flags, const char *name,
		    struct pm_objects *out);
/* Find the object whose path (as the process sees it) is @path. */
const struct pm_object *procmaps_find(const struct pm_objects *o,
				      const char *path);

/* File offset of @addr in the object our own process maps it from
 * (/proc/self/maps): 0, -ENOENT if no mapping holds it, or -errno. */
int  procmaps_self_offset(const void *addr, uint64_t *off);

#endif
