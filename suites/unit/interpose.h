/*
 * interpose.h — a unit test's own syscall(): every call goes on to libc's
 * but those the test's unit_syscall_fails() answers 1 for (it sets errno
 * first).  libbpf and the attach modes call bpf() and perf_event_open()
 * through syscall(), the feature probes 335 and 336: an executable's
 * definition wins over libc's for the objects linked into it.
 * The includer defines _GNU_SOURCE (RTLD_NEXT) and unit_syscall_fails.
 */
#ifndef PC_UNIT_INTERPOSE_H
#define PC_UNIT_INTERPOSE_H

#include <dlfcn.h>
#include <stdarg.h>

static int unit_syscall_fails(long nr);

long syscall(long nr, ...)
{
	static long (*real)(long, ...);
	long a[6];
	va_list ap;

	va_start(ap, nr);
	for (int i = 0; i < 6; i++)
		a[i] = va_arg(ap, long);
	va_end(ap);
	if (unit_syscall_fails(nr))
		return -1;
	if (!real)
		real = (long (*)(long, ...))dlsym(RTLD_NEXT, "syscall");
	return real(nr, a[0], a[1], a[2], a[3], a[4], a[5]);
}

#endif
