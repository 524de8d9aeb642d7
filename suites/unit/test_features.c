/*
 * test_features.c — the feature registry's cache (features.c): the first
 * answer a row gets stands, whoever gives it (a probe that decides two
 * rows notes the second before that row's own probe runs), and an id out
 * of the table is ignored, not written past the cache.  Then the x86
 * system-call rows, each on its own number: syscall() is interposed here
 * to answer ENOSYS for one number, as a kernel without that call would
 * (seccomp cannot: the kernel lets 335 and 336 through every filter).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <stdarg.h>
#include <string.h>
#include "unit.h"
#include "features.h"

static long enosys_nr = -1;     /* the number answered ENOSYS; -1: none */

long syscall(long nr, ...)
{
	static long (*real)(long, ...);
	long a[6];
	va_list ap;

	va_start(ap, nr);
	for (int i = 0; i < 6; i++)
		a[i] = va_arg(ap, long);
	va_end(ap);
	if (nr == enosys_nr) {
		errno = ENOSYS;
		return -1;
	}
	if (!real)
		real = (long (*)(long, ...))dlsym(RTLD_NEXT, "syscall");
	return real(nr, a[0], a[1], a[2], a[3], a[4], a[5]);
}

static void test_first_answer_stands(void)
{
	char why[256];

	feature_note(FEATURE_PROBE_NOP10, 0, "first: decided by another probe");
	feature_note(FEATURE_PROBE_NOP10, 1, NULL);
	UNIT_EQ_INT(feature_has(FEATURE_PROBE_NOP10, why, sizeof(why)), 0,
		    "a second note does not change the first answer");
	UNIT_EQ_STR(why, "first: decided by another probe", "nor its reason");
	feature_note(FEATURE_PROBE_DS_PREFIX, -5, NULL);
	feature_note(FEATURE_PROBE_DS_PREFIX, 1, NULL);
	UNIT_EQ_INT(feature_has(FEATURE_PROBE_DS_PREFIX, why, sizeof(why)), 0,
		    "a probe that could not run: no, and it stands");
	UNIT_EQ_STR(why, "the probe could not run: Input/output error", "its reason names the error");
}

static void test_out_of_table(void)
{
	char why[256];

	/* The sanitizer build sees a write past the cache. */
	feature_note((enum feature_id)(FEATURE_FAKE + 1), 1, NULL);
	feature_note((enum feature_id)(FEATURE_FAKE + 40), 1, NULL);
	UNIT_EQ_INT(feature_has((enum feature_id)(FEATURE_FAKE + 1), why, sizeof(why)), 0,
		    "an id past the table: no");
	UNIT_EQ_STR(why, "no such row in the feature table", "and says why");
}

/* Each row probes its own call: with one of them gone the other answers
 * as it did with both there. */
static void test_syscall_rows(void)
{
	char why[256];
	int ret = feature_probe_x86_syscall(FEATURE_URETPROBE_SYSCALL, why, sizeof(why));
	int up = feature_probe_x86_syscall(FEATURE_UPROBE_SYSCALL, why, sizeof(why));

	enosys_nr = 336;
	UNIT_EQ_INT(feature_probe_x86_syscall(FEATURE_UPROBE_SYSCALL, why, sizeof(why)), 0,
		    "uprobe_syscall with 336 answering ENOSYS: no");
	UNIT_EQ_STR(why, "syscall 336: ENOSYS", "uprobe_syscall: its reason names 336");
	UNIT_EQ_INT(feature_probe_x86_syscall(FEATURE_URETPROBE_SYSCALL, why, sizeof(why)), ret,
		    "uretprobe_syscall with 336 gone: as before");
	enosys_nr = 335;
	UNIT_EQ_INT(feature_probe_x86_syscall(FEATURE_URETPROBE_SYSCALL, why, sizeof(why)), 0,
		    "uretprobe_syscall with 335 answering ENOSYS: no");
	UNIT_EQ_STR(why, "syscall 335: ENOSYS", "uretprobe_syscall: its reason names 335");
	UNIT_EQ_INT(feature_probe_x86_syscall(FEATURE_UPROBE_SYSCALL, why, sizeof(why)), up,
		    "uprobe_syscall with 335 gone: as before");
	enosys_nr = -1;
}

int main(void)
{
	test_syscall_rows();
	test_first_answer_stands();
	test_out_of_table();
	return unit_done();
}
