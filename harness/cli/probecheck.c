/*
 * probecheck.c — entry point: dispatch to a subcommand.
 */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>
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

/*
 * Started with stdin, stdout or stderr closed (a daemon's child, `<&-`),
 * the tracer would hand those numbers to the first files it opens: its
 * messages would be written into whatever took fd 2 (a stash record being
 * written, a BPF map), its events into fd 1's.  Keep them taken:
 * /dev/null, which is also what a -c command inherits there.  Exit 1 if
 * that cannot be done (nothing is attached yet).
 */
static int std_fds_open(void)
{
	for (int fd = 0; fd < 3; fd++) {
		int n;

		if (fcntl(fd, F_GETFD) >= 0 || errno != EBADF)
			continue;
		n = open("/dev/null", O_RDWR);  /* the lowest free: fd */
		if (n != fd) {
			if (n >= 0)
				close(n);
			return -1;
		}
	}
	return 0;
}

int main(int argc, char **argv)
{
	if (std_fds_open())
		return EXIT_RUNTIME;
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
