/*
 * probecheck.c — entry point: dispatch to a subcommand.
 */
#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include "cli.h"
#include "log.h"

void usage(FILE *f)
{
	fputs("usage: probecheck list [--json] FILE\n"
	      "       probecheck list [--json] -p PID\n"
	      "       probecheck trace [--json] [--str N[,N...]] [--ready FILE] [-v]\n"
	      "                        (-c 'CMD' | -p PID) PROBE...\n"
	      "PROBE: usdt:PATH:PROVIDER:NAME  (PROVIDER, NAME: globs; PATH '*' with -p)\n"
	      "exit: 0 success, 1 runtime failure, 2 usage or bad input\n", f);
}

int parse_pid(const char *s, pid_t *pid)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (!*s || *end || errno || v <= 0 || v > 4194304 || !isdigit(*s)) {
		pc_err("pid '%s': not a process id", s);
		return -EINVAL;
	}
	if (kill(v, 0) && errno == ESRCH) {
		pc_err("pid %ld: no such process", v);
		return -ESRCH;
	}
	*pid = v;
	return 0;
}

void bad_option(const char *cmd, int c, char **argv)
{
	const char *opt = argv[optind - 1];

	if (c == ':')
		pc_err("%s: option '%s' needs an argument", cmd, opt);
	else
		pc_err("%s: unknown option '%s'", cmd, opt);
}

void json_str(FILE *f, const char *s)
{
	fputc('"', f);
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		switch (*p) {
		case '"':  fputs("\\\"", f); break;
		case '\\': fputs("\\\\", f); break;
		case '\n': fputs("\\n", f); break;
		case '\t': fputs("\\t", f); break;
		case '\r': fputs("\\r", f); break;
		default:
			if (*p < 0x20 || *p >= 0x7f)
				fprintf(f, "\\u%04x", *p);
			else
				fputc(*p, f);
		}
	}
	fputc('"', f);
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		usage(stderr);
		return EXIT_USAGE;
	}
	if (!strcmp(argv[1], "list"))
		return cmd_list(argc - 1, argv + 1);
	if (!strcmp(argv[1], "trace"))
		return cmd_trace(argc - 1, argv + 1);
	if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
		usage(stdout);
		return EXIT_OK;
	}
	pc_err("unknown command '%s'", argv[1]);
	usage(stderr);
	return EXIT_USAGE;
}
