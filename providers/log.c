#include <stdio.h>
#include "log.h"

int pc_log_quiet;
int pc_log_verbose;

void pc_err(const char *fmt, ...)
{
	va_list ap;

	if (pc_log_quiet)
		return;
	va_start(ap, fmt);
	fputs("probecheck: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
}

void pc_dbg(const char *fmt, ...)
{
	va_list ap;

	if (!pc_log_verbose)
		return;
	va_start(ap, fmt);
	fputs("probecheck: debug: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
}
