/*
 * cli.c — what every subcommand shares: usage, argument helpers, JSON
 * strings.  usage lists the providers and attach modes from their tables.
 */
#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include "attach.h"
#include "cli.h"
#include "log.h"
#include "provider.h"

void usage(FILE *f)
{
	char modes[128];

	attach_mode_names(modes, sizeof(modes), "|");
	fprintf(f, "usage: probecheck list [--json] FILE\n"
		"       probecheck list [--json] -p PID\n"
		"       probecheck trace [--json] [--str N[,N...]] [--buf N,LEN]... [--sleepable]\n"
		"                        [--args N] [--ready FILE] [-v]\n"
		"                        [--attach %s|auto] [--follow] [--ustack[=N]]\n"
		"                        [-c 'CMD' | -p PID | -a] PROBE...\n"
		"       probecheck cleanup\n"
		"       probecheck features\n", modes);
	for (size_t i = 0; pc_providers[i]; i++)
		fprintf(f, "%s %-38s (%s)\n", i ? "      " : "PROBE:",
			pc_providers[i]->pv_syntax, pc_providers[i]->pv_usage);
	fputs("       PATH '*': every object the process maps (-p, or -c --follow)\n"
	      "without -c or -p: every process that maps the object (as -a)\n"
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

void bad_option(const char *cmd, int c, char **argv, int at)
{
	const char *opt = argv[at];
	char shortopt[3] = { '-', (char)optopt, 0 };

	/* A short option is named alone: in a cluster ("-Zp1") the element
	 * is not the option, and getopt may not have moved past it. */
	if (optopt && strncmp(opt, "--", 2))
		opt = shortopt;

	if (c == ':')
		pc_err("%s: option '%s' needs an argument", cmd, opt);
	else
		pc_err("%s: unknown option '%s'", cmd, opt);
}

/* Length of the valid UTF-8 sequence at @p (lead byte >= 0x80), 0 if
 * it is not one: those bytes are passed through, a JSON reader decodes
 * them to the same bytes; anything else is escaped. */
static int utf8_len(const unsigned char *p)
{
	int n, i;
	unsigned cp;

	if (p[0] >= 0xc2 && p[0] <= 0xdf)
		n = 2, cp = p[0] & 0x1f;
	else if (p[0] >= 0xe0 && p[0] <= 0xef)
		n = 3, cp = p[0] & 0x0f;
	else if (p[0] >= 0xf0 && p[0] <= 0xf4)
		n = 4, cp = p[0] & 0x07;
	else
		return 0;
	for (i = 1; i < n; i++) {
		if ((p[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (p[i] & 0x3f);
	}
	if ((n == 3 && (cp < 0x800 || (cp >= 0xd800 && cp <= 0xdfff))) ||
	    (n == 4 && (cp < 0x10000 || cp > 0x10ffff)))
		return 0;
	return n;
}

void json_str(FILE *f, const char *s)
{
	int n;

	fputc('"', f);
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		switch (*p) {
		case '"':  fputs("\\\"", f); break;
		case '\\': fputs("\\\\", f); break;
		case '\n': fputs("\\n", f); break;
		case '\t': fputs("\\t", f); break;
		case '\r': fputs("\\r", f); break;
		default:
			if (*p >= 0x80 && (n = utf8_len(p)) > 0) {
				fwrite(p, 1, n, f);
				p += n - 1;
			} else if (*p < 0x20 || *p >= 0x7f) {
				fprintf(f, "\\u%04x", *p);
			} else {
				fputc(*p, f);
			}
		}
	}
	fputc('"', f);
}

