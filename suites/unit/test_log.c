/*
 * test_log.c — error words: kernel-internal errnos (512-530) leak to
 * userspace through perf_event_open and bpf; strerror() calls them
 * "Unknown error N", which tells a user nothing.
 */
#include <errno.h>
#include <string.h>
#include "log.h"
#include "unit.h"

int main(void)
{
	char what[64];

	UNIT_EQ_STR(pc_strerror(ENOENT), strerror(ENOENT),
		    "an ordinary errno is strerror's");
	UNIT_EQ_STR(pc_site_strerror(EINVAL), strerror(EINVAL),
		    "an ordinary errno at a site is strerror's too");
	UNIT_TRUE(strstr(pc_strerror(524), "ENOTSUPP (524)") != NULL,
		  "524 is named ENOTSUPP");
	UNIT_TRUE(strstr(pc_site_strerror(524), "cannot probe the instruction"),
		  "524 at a site: the kernel cannot probe the instruction");
	for (int e = 512; e <= 530; e++) {
		snprintf(what, sizeof(what), "%d is not 'Unknown error'", e);
		UNIT_TRUE(e == 520 || !strstr(pc_strerror(e), "Unknown"), what);
	}
	/* strerror's "Unknown error N" lives in a buffer the next call frees
	 * (glibc): compare with a copy (make sanitize found the test reading
	 * a freed one). */
	snprintf(what, sizeof(what), "%s", strerror(520));
	UNIT_EQ_STR(pc_strerror(520), what,
		    "520 (unassigned in the kernel) stays strerror's");
	snprintf(what, sizeof(what), "%s", strerror(531));
	UNIT_EQ_STR(pc_strerror(531), what, "past 530: strerror's");
	snprintf(what, sizeof(what), "%s", strerror(511));
	UNIT_EQ_STR(pc_strerror(511), what, "below 512: strerror's (never the table's)");
	return unit_done();
}
