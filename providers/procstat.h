/*
 * procstat.h — the one reader of /proc/PID/stat.
 */
#ifndef PC_PROCSTAT_H
#define PC_PROCSTAT_H

#include <sys/types.h>

struct proc_stat {
	char ps_state;                  /* field 3: R S D Z X t ... */
	pid_t ps_ppid;                  /* field 4 */
	unsigned long long ps_start;    /* field 22, clock ticks after boot */
};

/*
 * Fields 3, 4 and 22 of /proc/PID/stat.  comm (field 2) may hold spaces
 * and ')', so fields are counted from the last ')'.  0, -ESRCH when there
 * is no such process, -EINVAL when the line is malformed, else -errno; no
 * message (a process may go at any time: the caller decides).
 */
int proc_stat_read(pid_t pid, struct proc_stat *ps);
/* The same from a line already read (for tests). */
int proc_stat_parse(const char *line, struct proc_stat *ps);

#endif
