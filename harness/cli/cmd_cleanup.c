/*
 * cmd_cleanup.c — `probecheck cleanup`: remove what dead tracers left.
 *
 * A tracer in the tracefs attach mode leaves named uprobe_events entries
 * behind when it dies without detaching (SIGKILL, a crash); the stash
 * (providers/stash.c) lists them per tracer.  This command undoes the
 * records of tracers that are gone, leaves live tracers alone and refuses
 * records it cannot trust.  Every probecheck start runs the same cleanup
 * quietly (cleanup_at_start), so a leak lasts only until the next run.
 *
 * stdout: one line per thing removed, then one summary line.
 * exit: 0 all clean or nothing to do, 1 something was refused or could
 * not be removed (stderr says what), 2 usage.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>
#include "cleanup.h"
#include "cli.h"
#include "log.h"
#include "stash.h"

static int parse_opts(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "help", no_argument, NULL, 'h' },
		{ 0 }
	};
	int c, at;

	/* 0, not 1: all of getopt's state.  A parse that stopped inside a
	 * cluster ("-Zp1") would resume there, in an argv that is gone. */
	optind = 0;
	opterr = 0;
	while ((at = GETOPT_AT(), c = getopt_long(argc, argv, "+:h", opts, NULL)) != -1) {
		if (c == 'h') {
			usage(stdout);
			return 1;
		}
		bad_option("cleanup", c, argv, at);
		return -EINVAL;
	}
	if (optind < argc) {
		pc_err("cleanup: unexpected argument '%s'", argv[optind]);
		return -EINVAL;
	}
	return 0;
}

int cmd_cleanup(int argc, char **argv)
{
	struct stash_report r;
	int err;

	err = parse_opts(argc, argv);
	if (err) {
		if (err < 0)
			usage(stderr);
		return err < 0 ? EXIT_USAGE : EXIT_OK;
	}
	err = stash_cleanup(stdout, 0, &r);
	printf("cleanup: %u record%s removed (%u tracefs entr%s), %u live "
	       "tracer%s left alone, %u refused, %u failed\n", r.sr_removed,
	       r.sr_removed == 1 ? "" : "s", r.sr_items,
	       r.sr_items == 1 ? "y" : "ies", r.sr_live,
	       r.sr_live == 1 ? "" : "s", r.sr_refused, r.sr_failed);
	return err ? EXIT_RUNTIME : EXIT_OK;
}

void cleanup_at_start(void)
{
	struct stash_report r;
	int err = stash_cleanup(stderr, 1, &r);

	/* Not root (EACCES): not ours to look at; everything else is said. */
	if (err && err != -EACCES)
		pc_err("cleanup: the stash '%s' needs a look (%s): run "
		       "'probecheck cleanup'", stash_dir(), pc_strerror(-err));
}
