/*
 * procstat.c — /proc/PID/stat, read once here for the stash (start times),
 * follow.c (parents) and trace (is the target a zombie?).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include "procstat.h"

int proc_stat_parse(const char *line, struct proc_stat *ps)
{
	const char *p = strrchr(line, ')');
	int ppid, field;

	if (!p || p[1] != ' ' || !p[2])
		return -EINVAL;
	p += 2;
	ps->ps_state = *p;
	if (sscanf(p, "%*c %d", &ppid) != 1)
		return -EINVAL;
	ps->ps_ppid = ppid;
	for (field = 3; field < 22 && p; field++) {
		p = strchr(p, ' ');
		if (p)
			p++;
	}
	if (!p || sscanf(p, "%llu", &ps->ps_start) != 1)
		return -EINVAL;
	return 0;
}

int proc_stat_read(pid_t pid, struct proc_stat *ps)
{
	char path[64], buf[1024];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT ? -ESRCH : -errno;
	n = read(fd, buf, sizeof(buf) - 1);
	if (n < 0)
		n = errno == ESRCH ? 0 : -errno;
	close(fd);
	if (n <= 0)
		return n < 0 ? (int)n : -ESRCH;
	buf[n] = 0;
	return proc_stat_parse(buf, ps);
}
