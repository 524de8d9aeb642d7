/*
 * pc-shcmd — probecheck's verdict on the -c rule, for the suites.
 *
 *   pc-shcmd CMD     prints "yes" if `trace -c CMD` execs CMD directly
 *                    (a simple command), "no" if the shell runs it
 *
 * The rule is providers/shcmd.h, the code harness/cli/trace_run.c runs;
 * suites/tracers.bats asks this (through harness/tracers/probecheck
 * simple-command) and every other adapter the cases of
 * suites/data/simple-command.tsv.  Exit 0, or 2 on bad usage.
 */
#include <stdio.h>
#include "shcmd.h"

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: pc-shcmd CMD\n");
		return 2;
	}
	puts(shcmd_is_simple(argv[1]) ? "yes" : "no");
	return 0;
}
