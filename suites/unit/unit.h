/*
 * unit.h — a TAP-printing unit test kit, test_progs style: every check
 * prints what it compared, expected and actual, when it fails.
 *
 *   UNIT_EQ_INT(actual, expected, "what");
 *   UNIT_EQ_STR(actual, expected, "what");
 *   UNIT_TRUE(cond, "what");
 *   return unit_done();   // from main(): 0 if every check passed
 *
 * unit_done() also checks that the binary ends with the file descriptors
 * it started with: a code path that forgets a close() (a /proc file, an
 * ELF, a perf event) fails the test that ran it.
 */
#ifndef PC_UNIT_H
#define PC_UNIT_H

#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <string.h>
#include <inttypes.h>

static int unit_n, unit_failed;

static inline void unit_ok(int ok, const char *file, int line, const char *what)
{
	unit_n++;
	if (!ok)
		unit_failed++;
	printf("%sok %d - %s\n", ok ? "" : "not ", unit_n, what);
	if (!ok)
		printf("#   at %s:%d\n", file, line);
}

#define UNIT_EQ_INT(act, exp, what) do {				\
	long long _a = (long long)(act), _e = (long long)(exp);	\
	unit_ok(_a == _e, __FILE__, __LINE__, (what));			\
	if (_a != _e)							\
		printf("#   expected %lld (0x%llx), got %lld (0x%llx)\n",	\
		       _e, (unsigned long long)_e, _a, (unsigned long long)_a); \
} while (0)

#define UNIT_EQ_STR(act, exp, what) do {				\
	const char *_a = (act), *_e = (exp);				\
	int _ok = (_a && _e) ? !strcmp(_a, _e) : _a == _e;		\
	unit_ok(_ok, __FILE__, __LINE__, (what));			\
	if (!_ok)							\
		printf("#   expected '%s', got '%s'\n",		\
		       _e ? _e : "(null)", _a ? _a : "(null)");		\
} while (0)

#define UNIT_TRUE(cond, what) unit_ok(!!(cond), __FILE__, __LINE__, (what))

/*
 * Expected error messages off (stderr to /dev/null) and on again: the
 * code under test reports its errors itself, the test only checks codes.
 */
static int unit_saved_stderr = -1;
static inline void unit_quiet(int on)
{
	int null;

	fflush(stderr);
	if (on && unit_saved_stderr < 0) {
		unit_saved_stderr = fcntl(2, F_DUPFD_CLOEXEC, 3);
		null = open("/dev/null", O_WRONLY | O_CLOEXEC);
		if (null >= 0) {
			dup2(null, 2);
			close(null);
		}
	} else if (!on && unit_saved_stderr >= 0) {
		dup2(unit_saved_stderr, 2);
		close(unit_saved_stderr);
		unit_saved_stderr = -1;
	}
}

/*
 * unit_capture(1): stderr into an unlinked temporary file until
 * unit_capture(0), which leaves what was printed in unit_captured
 * (NUL-terminated, cut at its size): a test reads the message of the
 * code under test.
 */
static char unit_captured[4096];
static int unit_capture_fd = -1, unit_capture_saved = -1;
static inline void unit_capture(int on)
{
	char path[] = "/tmp/pc-unit-stderr.XXXXXX";
	ssize_t n;

	fflush(stderr);
	if (on && unit_capture_fd < 0) {
		unit_captured[0] = '\0';
		unit_capture_fd = mkstemp(path);
		if (unit_capture_fd < 0)
			return;
		unlink(path);
		unit_capture_saved = fcntl(2, F_DUPFD_CLOEXEC, 3);
		dup2(unit_capture_fd, 2);
	} else if (!on && unit_capture_fd >= 0) {
		dup2(unit_capture_saved, 2);
		close(unit_capture_saved);
		n = pread(unit_capture_fd, unit_captured, sizeof(unit_captured) - 1, 0);
		unit_captured[n > 0 ? n : 0] = '\0';
		close(unit_capture_fd);
		unit_capture_fd = unit_capture_saved = -1;
	}
}

/* Descriptor 0 made free for the code under test (run-unit closes stdin,
 * a test run by hand has it open): what unit_fd0_back takes to restore.
 * Saved copies of the standard descriptors go above 2 (F_DUPFD), never
 * into the 0 a test means the code to get. */
static inline int unit_fd0_free(void)
{
	int saved = fcntl(0, F_DUPFD_CLOEXEC, 3);

	close(0);
	return saved;
}

static inline void unit_fd0_back(int saved)
{
	if (saved >= 0) {
		dup2(saved, 0);
		close(saved);
	} else {
		close(0);
	}
}

/* Open descriptors of this process, but the one reading the list. */
static inline int unit_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	int n = 0;

	if (!d)
		return -1;
	while (readdir(d))
		n++;
	closedir(d);
	return n - 3;   /* ".", ".." and the DIR's own */
}

static int unit_fds_start = -1;

__attribute__((constructor)) static void unit_fds_at_start(void)
{
	unit_fds_start = unit_fds();
}

static inline int unit_done(void)
{
	int fds = unit_fds();

	unit_ok(fds == unit_fds_start, __FILE__, __LINE__,
		"no file descriptor left open at the end");
	if (fds != unit_fds_start)
		printf("#   %d open at the start, %d at the end\n", unit_fds_start, fds);
	printf("1..%d\n", unit_n);
	if (unit_failed)
		printf("# %d of %d checks failed\n", unit_failed, unit_n);
	return unit_failed ? 1 : 0;
}

#endif
