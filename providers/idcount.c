/*
 * idcount.c — a count per small id (idcount.h).  The table grows 64 ids
 * past the largest seen, never past the limit: sites fire in any order
 * and a realloc per new id would cost more than the events.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "idcount.h"

int id_counts_add(struct id_counts *c, size_t id, size_t limit)
{
	if (id >= limit)
		return -ERANGE;
	if (id >= c->ic_n) {
		size_t n = id + 64 < limit ? id + 64 : limit;
		uint64_t *v = realloc(c->ic_v, n * sizeof(*v));

		if (!v)
			return -ENOMEM;
		memset(v + c->ic_n, 0, (n - c->ic_n) * sizeof(*v));
		c->ic_v = v;
		c->ic_n = n;
	}
	c->ic_v[id]++;
	return 0;
}

uint64_t id_counts_get(const struct id_counts *c, size_t id)
{
	return id < c->ic_n ? c->ic_v[id] : 0;
}

void id_counts_free(struct id_counts *c)
{
	free(c->ic_v);
	c->ic_v = NULL;
	c->ic_n = 0;
}
