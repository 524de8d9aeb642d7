/*
 * test_idcount.c — counts per id (providers/idcount.c), the per-site
 * delivered events of -v: every id below the limit counts, the last one
 * too (PC_MAX_SPECS - 1 is a real site id: a full table of sites), the
 * limit and past it are refused and leave nothing; the table grows in
 * steps of 64 but never past the limit, keeps the counts it had and
 * zeroes what it adds (allocations are filled with junk here).  Allocation failure: test_nomem.
 */
#include <errno.h>
#include <linux/types.h>
#include <malloc.h>
#include "unit.h"
#include "idcount.h"
#include "pc_bpf.h"

static void test_bounds(void)
{
	struct id_counts c = { 0 };

	UNIT_EQ_INT(id_counts_get(&c, 0), 0, "an empty table: every count 0");
	UNIT_EQ_INT(id_counts_add(&c, PC_MAX_SPECS - 1, PC_MAX_SPECS), 0,
		    "the last site id counts");
	UNIT_EQ_INT(id_counts_get(&c, PC_MAX_SPECS - 1), 1, "... once");
	UNIT_EQ_INT(c.ic_n, PC_MAX_SPECS, "the table ends at the limit, not 64 past the id");
	UNIT_EQ_INT(id_counts_add(&c, PC_MAX_SPECS, PC_MAX_SPECS), -ERANGE,
		    "the limit itself: refused");
	UNIT_EQ_INT(id_counts_add(&c, UINT32_MAX, PC_MAX_SPECS), -ERANGE,
		    "the largest id: refused");
	UNIT_EQ_INT(id_counts_get(&c, PC_MAX_SPECS), 0, "a refused id reads 0");
	UNIT_EQ_INT(c.ic_n, PC_MAX_SPECS, "... and grew nothing");
	id_counts_free(&c);
	UNIT_EQ_INT(c.ic_n, 0, "freed: empty");
	UNIT_EQ_INT(id_counts_add(&c, 0, 1), 0, "a limit of 1: id 0 counts");
	UNIT_EQ_INT(id_counts_add(&c, 1, 1), -ERANGE, "... id 1 does not");
	UNIT_EQ_INT(c.ic_n, 1, "a table of one");
	id_counts_free(&c);
}

static void test_growth(void)
{
	struct id_counts c = { 0 };
	size_t nonzero = 0;

	UNIT_EQ_INT(id_counts_add(&c, 5, 1000), 0, "id 5");
	UNIT_EQ_INT(c.ic_n, 69, "grown to 64 past it");
	UNIT_EQ_INT(id_counts_add(&c, 68, 1000), 0, "the table's last id: no growth");
	UNIT_EQ_INT(c.ic_n, 69, "... still 69");
	UNIT_EQ_INT(id_counts_add(&c, 69, 1000), 0, "one past it");
	UNIT_EQ_INT(c.ic_n, 133, "... grown again");
	UNIT_EQ_INT(id_counts_add(&c, 5, 1000), 0, "id 5 again");
	UNIT_EQ_INT(id_counts_get(&c, 5), 2, "id 5 kept its count through growth");
	UNIT_EQ_INT(id_counts_get(&c, 68) + id_counts_get(&c, 69), 2, "68 and 69 once each");
	for (size_t i = 0; i < c.ic_n; i++)
		nonzero += i != 5 && i != 68 && i != 69 && id_counts_get(&c, i);
	UNIT_EQ_INT(nonzero, 0, "every id never added reads 0 (the table zeroed as it grew)");
	UNIT_EQ_INT(id_counts_get(&c, 132), 0, "the last of the grown part is 0");
	UNIT_EQ_INT(id_counts_get(&c, 500), 0, "an id past the table reads 0");
	id_counts_free(&c);
}

int main(void)
{
	/* Allocations filled with a non-zero byte: a table grown without
	 * its zeroing shows it (ASan fills them on its own). */
	mallopt(M_PERTURB, 0x5a);
	test_bounds();
	test_growth();
	return unit_done();
}
