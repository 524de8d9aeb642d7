/*
 * cmd_features.c — `probecheck features`: every row of the feature
 * registry (providers/features.h), then the decisions the tracer makes
 * from them.
 *
 * One KEY=1 or KEY=0 line per row, in the table's order; a 0 is followed
 * by KEY_why=... naming what failed.  harness/lib/caps.bash copies every
 * such line into the run's capability file, so a test that `requires`
 * a row SKIPs with the reason; a row added to the table needs nothing
 * here.  Then the decisions, which are not capabilities:
 *   sites_by_place    1: sites are told apart by place, not cookie (attach.h)
 *   preempt_guard     1: site programs run with preemption off (K5)
 *   attach_MODE       1: `trace --attach=MODE` can work for this caller
 *                     (its rows, and its permissions: privileges.bats)
 *   attach_auto       what `trace --attach=auto` picks for -p/-c
 *   attach_auto_all   the same for -a and --follow (no pid filter)
 */
#include <stdio.h>
#include <string.h>
#include "attach.h"
#include "cli.h"
#include "features.h"
#include "log.h"

static void print_row(enum feature_id id)
{
	char why[400];
	int has;

	fflush(stdout);         /* probes fork: nothing buffered twice */
	has = feature_has(id, why, sizeof(why));
	printf("%s=%d\n", feature_key(id), has);
	if (!has)
		printf("%s_why=%s\n", feature_key(id), why);
}

static void print_decisions(void)
{
	char why[400];
	int place = attach_site_id(why, sizeof(why)) != ATTACH_ID_COOKIE;

	printf("sites_by_place=%d\nsites_by_place_why=%s\n", place, why);
	printf("preempt_guard=%d\n", attach_preempt_guard(why, sizeof(why)));
	printf("preempt_guard_why=%s\n", why);
	for (const struct attach_ops *const *m = attach_modes; *m; m++) {
		int ok = (*m)->ao_caps(why, sizeof(why)) >= 0;

		printf("attach_%s=%d\n", (*m)->ao_name, ok);
		if (!ok)
			printf("attach_%s_why=%s\n", (*m)->ao_name, why);
	}
	printf("attach_auto=%s\n", attach_choose(NULL, 1)->ao_name);
	printf("attach_auto_all=%s\n", attach_choose(NULL, 0)->ao_name);
}

int cmd_features(int argc, char **argv)
{
	if (argc > 1) {
		if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
			usage(stdout);
			return EXIT_OK;
		}
		pc_err("features: unexpected argument '%s'", argv[1]);
		usage(stderr);
		return EXIT_USAGE;
	}
	for (enum feature_id id = 0; id < feature_count(); id++)
		print_row(id);
	print_decisions();
	return fflush(stdout) ? EXIT_RUNTIME : EXIT_OK;
}
