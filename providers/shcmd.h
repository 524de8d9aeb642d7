/*
 * shcmd.h — the -c rule: may /bin/sh exec CMD directly?
 *
 * `trace -c CMD` runs CMD through /bin/sh.  dash forks for a plain
 * `sh -c 'prog args'` instead of exec'ing it, so for a simple command the
 * tracer runs `sh -c 'exec CMD'`: the traced process is then the command
 * itself.  Anything else runs as given, and only the shell process is
 * traced (with --follow, everything it starts).  CMD is simple when
 *   - after leading blanks (space, tab) it is not empty;
 *   - it has none of the shell's operators or grouping characters:
 *     ; & | < > ( ) { } ` and newline;
 *   - its first word (up to a blank) has no '=': not an assignment
 *     (`VAR=x prog` would make exec look for a program "VAR=x");
 *   - its first word is not a reserved word (! case do done elif else
 *     esac fi for if in then until while) nor a utility POSIX lets the
 *     shell keep to itself, which exec cannot run: the special built-ins
 *     (break : continue . eval exec exit export readonly return set
 *     shift times trap unset) and the intrinsic utilities (alias bg cd
 *     command fc fg getopts hash jobs kill read type ulimit umask
 *     unalias wait).
 * Quotes, $, \, globs and ~ are fine: the shell expands them, then execs.
 *
 * The rule is also written as a table of cases,
 * suites/data/simple-command.tsv, which every implementation answers in
 * suites/tracers.bats: this one (the CLI's trace_run.c, and the libbpf
 * tracer harness/tools/pc-libbpf-usdt.c; harness/tools/pc-shcmd prints its
 * verdict) and the adapters' (harness/tracers/lib/shcmd.bash).  Header
 * only, here at the bottom layer, so that the CLI and the test tools
 * compile in the same code.
 */
#ifndef PC_SHCMD_H
#define PC_SHCMD_H

#include <string.h>

static const char *const shcmd_shell_words[] = {
	/* reserved words */
	"!", "case", "do", "done", "elif", "else", "esac", "fi", "for", "if",
	"in", "then", "until", "while",
	/* POSIX special built-ins */
	"break", ":", "continue", ".", "eval", "exec", "exit", "export",
	"readonly", "return", "set", "shift", "times", "trap", "unset",
	/* POSIX intrinsic utilities */
	"alias", "bg", "cd", "command", "fc", "fg", "getopts", "hash", "jobs",
	"kill", "read", "type", "ulimit", "umask", "unalias", "wait",
};

/* 1 if /bin/sh may exec @cmd directly (see above), else 0. */
static inline int shcmd_is_simple(const char *cmd)
{
	const char *w = cmd + strspn(cmd, " \t");
	size_t n = strcspn(w, " \t"), i;

	if (!*w || strpbrk(cmd, ";&|<>(){}\n`") || memchr(w, '=', n))
		return 0;
	for (i = 0; i < sizeof(shcmd_shell_words) / sizeof(shcmd_shell_words[0]); i++)
		if (strlen(shcmd_shell_words[i]) == n &&
		    !memcmp(w, shcmd_shell_words[i], n))
			return 0;
	return 1;
}

#endif
