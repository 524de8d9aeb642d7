/*
 * pc-procs — the processes the cleanup invariants judge, for
 * harness/lib/invariants.bash (pc_inv_procs).
 *
 *   pc-procs [SESSIONS-FILE]
 *
 * Prints "PID COMM STATE TAG" for every process whose name (comm) begins
 * with fx_ or probecheck, and every process whose session id is listed in
 * SESSIONS-FILE (one per line: the sessions another tracer's adapter was
 * started in, whatever its processes are called).  TAG is the value of
 * PC_TAG in the process's environment, "-" if it has none, "?" if the
 * environment cannot be read, or is empty in a zombie (it has dropped it:
 * nothing to attribute).  A process that vanishes while being read is
 * left out.  In the order of the names in /proc, as a shell glob sorts
 * them.
 *
 * Why not bash: it read three files of every process of the machine, 40 to
 * 60 ms a call with the suites running beside each other, three or four
 * calls a test.
 *
 * Exit: 0; 2 bad usage or /proc or SESSIONS-FILE unreadable.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define PP_ENV_MAX (1 << 20)

struct sessions {
	long *ss_v;
	size_t ss_n;
};

/* Read the whole of a small /proc file, NUL-terminated: its length, or
 * -1 if it cannot be opened or its first read fails. */
static ssize_t slurp(const char *path, char *buf, size_t cap)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	size_t n = 0;
	ssize_t got = 0;

	if (fd < 0)
		return -1;
	while (n + 1 < cap && (got = read(fd, buf + n, cap - 1 - n)) > 0)
		n += (size_t)got;
	close(fd);
	buf[n] = '\0';
	return got < 0 && n == 0 ? -1 : (ssize_t)n;
}

static int load_sessions(const char *file, struct sessions *s)
{
	FILE *f = fopen(file, "r");
	long v;

	if (!f) {
		/* As the shell's test -s: no file, no sessions. */
		if (errno == ENOENT)
			return 0;
		fprintf(stderr, "pc-procs: '%s': %s\n", file, strerror(errno));
		return -1;
	}
	while (fscanf(f, "%ld", &v) == 1) {
		long *n = realloc(s->ss_v, (s->ss_n + 1) * sizeof(*n));

		if (!n) {
			fclose(f);
			fprintf(stderr, "pc-procs: out of memory\n");
			return -1;
		}
		s->ss_v = n;
		s->ss_v[s->ss_n++] = v;
	}
	if (ferror(f)) {
		fprintf(stderr, "pc-procs: '%s': %s\n", file, strerror(errno));
		fclose(f);
		return -1;
	}
	fclose(f);
	return 0;
}

static int in_sessions(const struct sessions *s, long sid)
{
	for (size_t i = 0; i < s->ss_n; i++)
		if (s->ss_v[i] == sid)
			return 1;
	return 0;
}

/* The PC_TAG of a NUL-separated environment of @n bytes, the last one
 * wins (as the shell's loop over it); "-" if none. */
static const char *tag_of(const char *env, size_t n)
{
	const char *tag = "-";

	for (size_t i = 0; i < n; i += strlen(env + i) + 1)
		if (!strncmp(env + i, "PC_TAG=", 7))
			tag = env + i + 7;
	return tag;
}

static void one(const char *pid, const struct sessions *s, char *env)
{
	char path[64], comm[64], stat[1024], state;
	const char *after, *tag;
	long sid;
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/%s/comm", pid);
	if (slurp(path, comm, sizeof(comm)) <= 0)
		return;
	comm[strcspn(comm, "\n")] = '\0';
	snprintf(path, sizeof(path), "/proc/%s/stat", pid);
	if (slurp(path, stat, sizeof(stat)) <= 0 || !(after = strrchr(stat, ')')))
		return;
	if (sscanf(after + 1, " %c %*d %*d %ld", &state, &sid) != 2)
		return;
	if (strncmp(comm, "fx_", 3) && strncmp(comm, "probecheck", 10) &&
	    !in_sessions(s, sid))
		return;
	snprintf(path, sizeof(path), "/proc/%s/environ", pid);
	n = slurp(path, env, PP_ENV_MAX);
	if (n < 0)
		tag = "?";
	else
		tag = tag_of(env, (size_t)n);
	if (state == 'Z' && n <= 0)
		tag = "?";
	printf("%s %s %c %s\n", pid, comm, state, tag);
}

static int by_name(const struct dirent **a, const struct dirent **b)
{
	return strcmp((*a)->d_name, (*b)->d_name);
}

static int is_pid(const struct dirent *d)
{
	return d->d_name[0] >= '0' && d->d_name[0] <= '9';
}

int main(int argc, char **argv)
{
	struct sessions s = { NULL, 0 };
	struct dirent **names;
	char *env;
	int n;

	if (argc > 2 || (argc == 2 && argv[1][0] == '-')) {
		fprintf(stderr, "usage: pc-procs [SESSIONS-FILE]\n");
		return 2;
	}
	if (argc == 2 && load_sessions(argv[1], &s))
		return 2;
	env = malloc(PP_ENV_MAX);
	n = scandir("/proc", &names, is_pid, by_name);
	if (!env || n < 0) {
		fprintf(stderr, "pc-procs: /proc: %s\n", strerror(env ? errno : ENOMEM));
		return 2;
	}
	for (int i = 0; i < n; i++) {
		one(names[i]->d_name, &s, env);
		free(names[i]);
	}
	free(names);
	free(env);
	free(s.ss_v);
	return fflush(stdout) ? 2 : 0;
}
