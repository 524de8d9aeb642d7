/*
 * unitsite.h — a site of file @path at offset @off, named unit:site, for
 * tests of what reads sites (the install check): 0, or -1 when the set
 * could not grow.  The caller checks ss_n.
 */
#ifndef PC_UNITSITE_H
#define PC_UNITSITE_H

#include <stdint.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include "site.h"

static inline int unit_site_add(struct site_set *ss, const char *path, uint64_t off)
{
	struct site *st = site_set_add(ss);
	struct stat sb;

	if (!st)
		return -1;
	st->st_path = strdup(path);
	st->st_open_path = strdup(path);
	st->st_provider = strdup("unit");
	st->st_name = strdup("site");
	st->st_args = strdup("");
	st->st_off = off;
	/* The place, as the providers set it (elf_obj_place): kernels
	 * without bpf_cookie (5.10) find a hit's site by it, and a site
	 * without one never gives an event there. */
	if (stat(path, &sb) == 0) {
		st->st_kdev = (uint64_t)major(sb.st_dev) << 20 | minor(sb.st_dev);
		st->st_ino = sb.st_ino;
	}
	return 0;
}

#endif
