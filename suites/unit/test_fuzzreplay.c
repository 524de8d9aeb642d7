/*
 * test_fuzzreplay.c — every committed fuzz input through its target.
 *
 * The fuzz targets' bodies (suites/fuzz/fuzz_NAME.c, built here with gcc
 * and no libFuzzer) run on each file of suites/fuzz/regress/NAME/ (the
 * inputs that once crashed or leaked, kept after the fix) and of
 * suites/fuzz/corpus/NAME/ (the hand-made seeds): one check per file.
 * A crash is this binary crashing; a broken invariant aborts it.  Every
 * target must have a corpus directory with at least one input, and every
 * directory there must name a target, so a wrong path fails instead of
 * passing with no checks.  What the bodies print (expected error
 * messages, usage) goes to /dev/null.
 *
 * The Makefile gives PC_FUZZ_DIR (suites/fuzz, absolute) and
 * PC_FUZZ_LIST (X(name) for every fuzz_NAME.c); $PC_FUZZ_DIR overrides
 * the first.
 */
#include <dirent.h>
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/stat.h>
#include "unit.h"

#define X(name) int fuzz_##name(const uint8_t *data, size_t size);
PC_FUZZ_LIST
#undef X

static const struct {
	const char *ft_name;
	int (*ft_fn)(const uint8_t *data, size_t size);
} targets[] = {
#define X(name) { #name, fuzz_##name },
	PC_FUZZ_LIST
#undef X
};
#define NTARGETS (sizeof(targets) / sizeof(targets[0]))

static int saved_out = -1, saved_err = -1;

/* stdout and stderr to /dev/null while a body runs, and back. */
static void silence(int on)
{
	int null;

	fflush(stdout);
	fflush(stderr);
	if (on) {
		saved_out = fcntl(1, F_DUPFD_CLOEXEC, 3);
		saved_err = fcntl(2, F_DUPFD_CLOEXEC, 3);
		null = open("/dev/null", O_WRONLY | O_CLOEXEC);
		dup2(null, 1);
		dup2(null, 2);
		close(null);
	} else {
		dup2(saved_out, 1);
		dup2(saved_err, 2);
		close(saved_out);
		close(saved_err);
	}
}

static int count_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *de;
	int n = 0;

	if (!d)
		return -1;
	while ((de = readdir(d)))
		n += de->d_name[0] != '.';
	closedir(d);
	return n - 1;   /* the DIR's own */
}

static int read_file(const char *path, uint8_t **buf, size_t *len)
{
	FILE *f = fopen(path, "re");
	long n;

	if (!f)
		return -errno;
	if (fseek(f, 0, SEEK_END) || (n = ftell(f)) < 0 || fseek(f, 0, SEEK_SET)) {
		fclose(f);
		return -EIO;
	}
	*buf = malloc(n ? n : 1);
	if (!*buf || fread(*buf, 1, n, f) != (size_t)n) {
		free(*buf);
		fclose(f);
		return -EIO;
	}
	fclose(f);
	*len = n;
	return 0;
}

static int by_name(const struct dirent **a, const struct dirent **b)
{
	return strcmp((*a)->d_name, (*b)->d_name);
}

static int regular(const struct dirent *de)
{
	return de->d_name[0] != '.';
}

/* Every file of ROOT/KIND/NAME through its target; -1: no directory. */
static int replay(const char *root, const char *kind, size_t t)
{
	char dir[4096], path[4096 + 256], what[600];
	struct dirent **v;
	int n;

	snprintf(dir, sizeof(dir), "%s/%s/%s", root, kind, targets[t].ft_name);
	n = scandir(dir, &v, regular, by_name);
	if (n < 0)
		return -1;
	for (int i = 0; i < n; i++) {
		uint8_t *buf = NULL;
		size_t len = 0;
		int err, rc = -1;

		snprintf(path, sizeof(path), "%s/%s", dir, v[i]->d_name);
		err = read_file(path, &buf, &len);
		if (!err) {
			silence(1);
			rc = targets[t].ft_fn(buf, len);
			silence(0);
			free(buf);
		}
		snprintf(what, sizeof(what), "%s: %s/%s", targets[t].ft_name,
			 kind, v[i]->d_name);
		UNIT_EQ_INT(err ? err : rc, 0, what);
		free(v[i]);
	}
	free(v);
	return n;
}

/* Every directory of ROOT/KIND names a target. */
static void check_names(const char *root, const char *kind)
{
	char dir[4096], what[400];
	struct dirent **v;
	int n;

	snprintf(dir, sizeof(dir), "%s/%s", root, kind);
	n = scandir(dir, &v, regular, by_name);
	for (int i = 0; i < n; i++) {
		size_t t;

		for (t = 0; t < NTARGETS; t++)
			if (!strcmp(v[i]->d_name, targets[t].ft_name))
				break;
		snprintf(what, sizeof(what), "%s/%s is a fuzz target's", kind,
			 v[i]->d_name);
		UNIT_TRUE(t < NTARGETS, what);
		free(v[i]);
	}
	if (n >= 0)
		free(v);
}

int main(void)
{
	const char *root = getenv("PC_FUZZ_DIR");
	char what[200];
	int fds;

	if (!root || !*root)
		root = PC_FUZZ_DIR;
	fds = count_fds();
	for (size_t t = 0; t < NTARGETS; t++) {
		int n = replay(root, "corpus", t);

		snprintf(what, sizeof(what), "%s: corpus/%s has inputs (in %s)",
			 targets[t].ft_name, targets[t].ft_name, root);
		UNIT_TRUE(n > 0, what);
		replay(root, "regress", t);
	}
	check_names(root, "corpus");
	check_names(root, "regress");
	UNIT_EQ_INT(count_fds(), fds, "no file descriptor left open by the targets");
	return unit_done();
}
