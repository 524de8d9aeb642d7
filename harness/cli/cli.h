/*
 * cli.h — the probecheck command line.  Exit codes: 0 success,
 * 1 runtime failure, 2 usage or bad input.
 */
#ifndef PC_CLI_H
#define PC_CLI_H

#include <stdio.h>
#include <sys/types.h>

enum { EXIT_OK = 0, EXIT_RUNTIME = 1, EXIT_USAGE = 2 };

int cmd_list(int argc, char **argv);
int cmd_trace(int argc, char **argv);
int cmd_features(int argc, char **argv);
void usage(FILE *f);

/* "123" -> pid; -EINVAL (message) for anything else, -ESRCH if absent. */
int parse_pid(const char *s, pid_t *pid);

/* Report getopt's '?' or ':' for the option just parsed; @at is the
 * index of the argv element getopt was in (optind before the call, 1 for
 * the first). */
void bad_option(const char *cmd, int c, char **argv, int at);
/* optind before a getopt call: the element the call parses from. */
#define GETOPT_AT() (optind ? optind : 1)

/* JSON string with escapes, quotes included. */
void json_str(FILE *f, const char *s);

#endif
