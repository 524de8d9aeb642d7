/*
 * fuzz_procmaps.c — the /proc/PID/maps parser (providers/procmaps.c).
 *
 * Input: the text of a maps file, read through procmaps_parse as
 * procmaps_read reads /proc/PID/maps (a FILE from fmemopen instead of
 * fopen); then procmaps_find for the first object and for a path that
 * is never mapped.  The objects are not opened (that half of
 * procmaps_read is the ELF reader's, fuzz_elf.c).  Quiet when the input's
 * size is odd, so that both the messages and their absence are run.
 *
 * Checked: one object per (device, inode), each with a path starting with
 * '/', its open path /proc/PID/root + path or, for a path ending in
 * " (deleted)", /proc/PID/map_files/START-END of one of its mappings (at
 * or above the lowest), and the lowest start of its mappings.
 */
#include "fuzz.h"
#include <errno.h>
#include "procmaps.h"

#define FUZZ_PID 4242

PC_FUZZ_TARGET(procmaps)
{
	struct pm_objects objs;
	char want[64], files[64];
	FILE *f;
	int err;

	if (!size)
		return 0;               /* fmemopen refuses an empty buffer */
	f = fmemopen((void *)data, size, "r");
	if (!f)
		return 0;
	err = procmaps_parse(f, FUZZ_PID, (size & 1) ? PM_QUIET : 0,
			     "/proc/4242/maps", &objs);
	fclose(f);
	fuzz_check(err == 0 || err == -EINVAL || err == -ENOMEM || err == -EIO);
	if (err) {
		fuzz_check(objs.po_n == 0 && objs.po_v == NULL);
		return 0;
	}
	snprintf(want, sizeof(want), "/proc/%d/root", FUZZ_PID);
	snprintf(files, sizeof(files), "/proc/%d/map_files/", FUZZ_PID);
	for (size_t i = 0; i < objs.po_n; i++) {
		const struct pm_object *po = &objs.po_v[i];
		size_t n = strlen(po->po_path);
		unsigned long long start, end;
		int pos = 0;

		fuzz_check(po->po_path[0] == '/');
		if (n >= 10 && !strcmp(po->po_path + n - 10, " (deleted)")) {
			fuzz_check(!strncmp(po->po_open_path, files, strlen(files)) &&
				   sscanf(po->po_open_path + strlen(files), "%llx-%llx%n",
					  &start, &end, &pos) == 2 &&
				   !po->po_open_path[strlen(files) + pos] &&
				   start >= po->po_start);
		} else {
			fuzz_check(!strncmp(po->po_open_path, want, strlen(want)) &&
				   !strcmp(po->po_open_path + strlen(want), po->po_path));
		}
		fuzz_check(po->po_ino != 0 && po->po_bias == 0);
		for (size_t j = 0; j < i; j++)
			fuzz_check(objs.po_v[j].po_dev != po->po_dev ||
				   objs.po_v[j].po_ino != po->po_ino);
	}
	if (objs.po_n)
		fuzz_check(procmaps_find(&objs, objs.po_v[0].po_path) != NULL);
	fuzz_check(procmaps_find(&objs, "") == NULL);
	procmaps_free(&objs);
	return 0;
}
