/*
 * probecheck.c — entry point: dispatch to a subcommand.
 */
#include <string.h>
#include "cleanup.h"
#include "cli.h"
#include "log.h"

static const struct {
	const char *c_name;
	int (*c_run)(int argc, char **argv);
} commands[] = {
	{ "list", cmd_list },
	{ "trace", cmd_trace },
	{ "features", cmd_features },
};

int main(int argc, char **argv)
{
	if (argc < 2) {
		usage(stderr);
		return EXIT_USAGE;
	}
	/* What dead tracers left (stash.c) goes first; cheap when none. */
	if (!strcmp(argv[1], "cleanup"))
		return cmd_cleanup(argc - 1, argv + 1);
	if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
		usage(stdout);
		return EXIT_OK;
	}
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		if (!strcmp(argv[1], commands[i].c_name)) {
			cleanup_at_start();
			return commands[i].c_run(argc - 1, argv + 1);
		}
	pc_err("unknown command '%s'", argv[1]);
	usage(stderr);
	return EXIT_USAGE;
}
