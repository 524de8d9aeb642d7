/*
 * idcount.h — a count per small id, grown as ids arrive: the events
 * delivered per site for -v's breakdown (session.c).  The ids are BPF's
 * (pc_spec ids), so the table is bounded by the caller's limit, not by
 * what the ring says.
 */
#ifndef PC_IDCOUNT_H
#define PC_IDCOUNT_H

#include <stddef.h>
#include <stdint.h>

struct id_counts {
	uint64_t *ic_v;         /* ic_n counts, zero past the last added */
	size_t    ic_n;
};

/* @id's count plus one, for ids below @limit: 0, -ERANGE for an id at or
 * past it, -ENOMEM (the counts unchanged). */
int      id_counts_add(struct id_counts *c, size_t id, size_t limit);
/* @id's count: 0 for one never added. */
uint64_t id_counts_get(const struct id_counts *c, size_t id);
void     id_counts_free(struct id_counts *c);

#endif
