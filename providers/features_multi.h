#ifndef PC_FEATURES_MULTI_H
#define PC_FEATURES_MULTI_H

#include <stdint.h>

/* A function of our own executable that only the probes' children call:
 * where the feature probes put their uprobes. */
void umulti_probe_target(void);

/* What the uprobe_multi experiment found (features_multi.c); a *_why
 * says what failed when a flag is 0. */
struct umulti_seen {
	int  us_link;           /* a link is made and its uprobe fires */
	int  us_pid;            /* with a pid, every thread of it is seen */
	char us_link_why[400];
	char us_pid_why[440];
};

/*
 * What @hits says, for two calls of the probed function from two threads
 * of the pid the link filters on: none seen, no working link; one, the
 * link works but filters by thread (before Linux 6.10); two, both.  Apart
 * from the experiment so that a test can give it each count.
 */
void umulti_judge(uint64_t hits, struct umulti_seen *c);

#endif
