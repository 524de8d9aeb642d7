/*
 * log.h — one error convention: functions return 0 or a negative errno and
 * say why on stderr, naming the thing and the reason:
 *     probecheck: usdt: '/bin/x': no .note.stapsdt section
 */
#ifndef PC_LOG_H
#define PC_LOG_H

#include <stdarg.h>

void pc_err(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void pc_dbg(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* pc_err unless @quiet: the caller asked to try something quietly. */
void pc_err_unless(int quiet, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
void pc_verr(int quiet, const char *fmt, va_list ap);

/*
 * strerror(ERR) (a positive errno), except that the kernel-internal
 * numbers 512-530 that leak to userspace through perf_event_open, bpf and
 * tracefs writes (strerror says "Unknown error 524") get their kernel name
 * and meaning.  pc_site_strerror says what ERR means for a probe site.
 */
const char *pc_strerror(int err);
/* The kernel's ENOTSUPP: what a uprobe on an instruction its decoder
 * refuses fails with (include/linux/errno.h; no userspace name). */
#define PC_ENOTSUPP 524
const char *pc_site_strerror(int err);

/* -v: debug output. */
extern int pc_log_verbose;

#endif
