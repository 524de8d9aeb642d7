/*
 * unitsite.h — a site of file @path at offset @off, named unit:site, for
 * tests of what reads sites (the install check): 0, or -1 when the set
 * could not grow.  The caller checks ss_n.
 */
#ifndef PC_UNITSITE_H
#define PC_UNITSITE_H

#include <stdint.h>
#include <string.h>
#include "site.h"

static inline int unit_site_add(struct site_set *ss, const char *path, uint64_t off)
{
	struct site *st = site_set_add(ss);

	if (!st)
		return -1;
	st->st_path = strdup(path);
	st->st_open_path = strdup(path);
	st->st_provider = strdup("unit");
	st->st_name = strdup("site");
	st->st_args = strdup("");
	st->st_off = off;
	return 0;
}

#endif
