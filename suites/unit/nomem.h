/*
 * nomem.h — the allocation countdown of test_nomem and test_nomemprov:
 * the binary interposes malloc, calloc, realloc and free (glibc lets
 * an executable do that); they count live allocations and fail the one a
 * countdown picks.  strdup, strndup and asprintf are the binary's own too, on top
 * of that malloc, so the count does not hang on how libc builds them.
 * Under ASan, and under valgrind (which replaces malloc and free in the
 * executable too), the allocator is not ours and the tests are skipped;
 * a self-check at the start finds out.  One binary includes it once.
 * nomem_ours_only = 1 counts only the allocations the executable's own
 * code makes (providers/, statically linked), not those of the shared
 * libraries it calls (libbpf: a session makes thousands, and how libbpf
 * answers its own allocation failures is libbpf's to test).
 */
#ifndef PC_NOMEM_H
#define PC_NOMEM_H

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "unit.h"

#if defined(__SANITIZE_ADDRESS__)
#define NOMEM_SKIP 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define NOMEM_SKIP 1
#endif
#endif

#ifndef NOMEM_SKIP
extern void *__libc_malloc(size_t size);
extern void *__libc_calloc(size_t n, size_t size);
extern void *__libc_realloc(void *p, size_t size);
extern void  __libc_free(void *p);

static long live;               /* allocations not yet freed */
static long countdown = -1;     /* allocations to let through; -1: all */
static int nomem_ours_only;
static int nomem_failed_ours;   /* the failed allocation was our code's */
extern char __executable_start[], etext[];

#define NOMEM_CALLER __builtin_extract_return_addr(__builtin_return_address(0))

/* Whether the next allocation may succeed: the countdown's one fails,
 * with errno ENOMEM as malloc's own failure sets it (getline and others
 * tell it from the end of a file by errno). */
static int may_allocate(const void *caller)
{
	if (countdown < 0)
		return 1;
	if (nomem_ours_only && ((const char *)caller < __executable_start ||
				(const char *)caller >= etext))
		return 1;
	if (countdown-- == 0) {
		countdown = -1;         /* fail once, like a transient ENOMEM */
		nomem_failed_ours = (const char *)caller >= __executable_start &&
				    (const char *)caller < etext;
		errno = ENOMEM;
		return 0;
	}
	return 1;
}

static void *malloc_for(size_t size, const void *caller)
{
	void *p = may_allocate(caller) ? __libc_malloc(size) : NULL;

	live += p != NULL;
	return p;
}

void *malloc(size_t size)
{
	return malloc_for(size, NOMEM_CALLER);
}

void *calloc(size_t n, size_t size)
{
	void *p = may_allocate(NOMEM_CALLER) ? __libc_calloc(n, size) : NULL;

	live += p != NULL;
	return p;
}

void *realloc(void *old, size_t size)
{
	void *p;

	if (!old)
		return malloc_for(size, NOMEM_CALLER);
	if (!size) {
		free(old);
		return NULL;
	}
	p = may_allocate(NOMEM_CALLER) ? __libc_realloc(old, size) : NULL;
	if (!p)
		errno = ENOMEM;         /* @old is untouched, still live */
	return p;
}

void free(void *p)
{
	live -= p != NULL;
	__libc_free(p);
}

static char *strndup_for(const char *s, size_t n, const void *caller)
{
	size_t len = strnlen(s, n);
	char *p = malloc_for(len + 1, caller);

	if (p) {
		memcpy(p, s, len);
		p[len] = '\0';
	}
	return p;
}

char *strndup(const char *s, size_t n)
{
	return strndup_for(s, n, NOMEM_CALLER);
}

char *strdup(const char *s)
{
	return strndup_for(s, strlen(s), NOMEM_CALLER);
}

/*
 * vasprintf and asprintf: the binary's own too.  libc's call malloc from
 * inside libc, which nomem_ours_only does not count, so a failure of our
 * code's asprintf (record_sync's, pm_acc_add's) was never made (draw
 * s8-20261129-a: record_sync going on past one, 03999899, survived).
 */
static int vasprintf_for(char **out, const void *caller, const char *fmt, va_list ap)
{
	va_list aq;
	int n;

	va_copy(aq, ap);
	n = vsnprintf(NULL, 0, fmt, aq);
	va_end(aq);
	*out = n < 0 ? NULL : malloc_for((size_t)n + 1, caller);
	if (!*out)
		return -1;
	return vsnprintf(*out, (size_t)n + 1, fmt, ap);
}

int vasprintf(char **restrict out, const char *restrict fmt, va_list ap)
{
	return vasprintf_for(out, NOMEM_CALLER, fmt, ap);
}

int asprintf(char **restrict out, const char *restrict fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vasprintf_for(out, NOMEM_CALLER, fmt, ap);
	va_end(ap);
	return n;
}

/*
 * Whether calls to malloc and free from another object reach the ones
 * above (called through pointers the compiler cannot see through, as
 * the code under test, compiled apart, calls them).
 */
static char outbuf[BUFSIZ];

static int allocator_is_ours(void)
{
	void *(*volatile m)(size_t) = malloc;
	void (*volatile f)(void *) = free;
	long before, taken;
	void *p;

	/* stdout's buffer, which glibc allocates at the first line of TAP,
	 * inside whichever sweep prints first: one of ours, set now. */
	setvbuf(stdout, outbuf, _IOLBF, sizeof(outbuf));
	before = live;
	p = m(1);

	taken = live - before;
	f(p);
	return taken == 1 && live == before;
}

/*
 * sweep: fail the k-th allocation of run() for k = 0, 1, ... until run()
 * makes fewer than k + 1: each failure must be -ENOMEM, or success where
 * the failure is tolerated (stdio falls back to an unbuffered stream; run()
 * checks the result is whole), and give back everything.  prepare() (not
 * counted) makes what run() consumes, run() frees what it made when it
 * succeeds, after() undoes prepare().  At least @min allocations must have
 * failed with -ENOMEM (the countdown reached the code).
 */
struct sweep {
	const char *name;
	void (*prepare)(void *ctx);
	int (*run)(void *ctx);
	void (*after)(void *ctx);	/* undoes prepare(), not counted */
	void *ctx;
	int min;
	int also;	/* another error a failure of a library's own
			 * allocation may give (0: none); ours give -ENOMEM */
};

static void sweep(const struct sweep *sw)
{
	char what[200];
	long before;
	int rc = -ENOMEM, k, failed = 0;

	/* Not 256: the gcov build's own functions (libgcov is linked in)
	 * take func_syms_read of this binary past it. */
	for (k = 0; k < 4096; k++) {
		int reached;

		before = live;	/* what prepare() makes, after() frees */
		if (sw->prepare)
			sw->prepare(sw->ctx);
		countdown = k;
		nomem_failed_ours = 0;
		rc = sw->run(sw->ctx);
		reached = countdown == -1;	/* the k-th allocation was made */
		countdown = -1;
		if (sw->after)
			sw->after(sw->ctx);
		if (!reached)
			break;
		if (rc) {
			failed += rc == -ENOMEM;
			snprintf(what, sizeof(what), "%s, allocation %d fails: -ENOMEM", sw->name, k);
			if (sw->also && rc == sw->also && !nomem_failed_ours)
				UNIT_TRUE(1, what);
			else
				UNIT_EQ_INT(rc, -ENOMEM, what);
		}
		if (!rc && nomem_failed_ours) {
			snprintf(what, sizeof(what), "%s, allocation %d (our code's) fails: "
				 "not a success", sw->name, k);
			UNIT_TRUE(0, what);
		}
		snprintf(what, sizeof(what), "%s, allocation %d %s: nothing left allocated",
			 sw->name, k, rc ? "fails" : "not needed");
		UNIT_EQ_INT(live - before, 0, what);
	}
	snprintf(what, sizeof(what), "%s succeeds once allocations do (%d made)", sw->name, k);
	UNIT_EQ_INT(rc, 0, what);
	snprintf(what, sizeof(what), "%s: at least %d allocations were made to fail",
		 sw->name, sw->min);
	UNIT_TRUE(failed >= sw->min, what);
}
#endif

#endif
