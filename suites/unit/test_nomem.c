/*
 * test_nomem.c — out-of-memory paths: every allocation in turn is made to
 * fail, and the code under test must answer -ENOMEM and give back all it
 * took (nothing leaks on the way out).
 *
 * The test binary interposes malloc, calloc, realloc and free (glibc lets
 * an executable do that); they count live allocations and fail the one a
 * countdown picks.  strdup and strndup are the binary's own too, on top
 * of that malloc, so the count does not hang on how libc builds them.
 * Under ASan, and under valgrind (which replaces malloc and free in the
 * executable too), the allocator is not ours and the test is skipped;
 * a self-check at the start finds out.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "unit.h"
#include "follow.h"
#include "provider.h"

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

/* Whether the next allocation may succeed: the countdown's one fails. */
static int may_allocate(void)
{
	if (countdown < 0)
		return 1;
	if (countdown-- == 0) {
		countdown = -1;         /* fail once, like a transient ENOMEM */
		return 0;
	}
	return 1;
}

void *malloc(size_t size)
{
	void *p = may_allocate() ? __libc_malloc(size) : NULL;

	live += p != NULL;
	return p;
}

void *calloc(size_t n, size_t size)
{
	void *p = may_allocate() ? __libc_calloc(n, size) : NULL;

	live += p != NULL;
	return p;
}

void *realloc(void *old, size_t size)
{
	void *p;

	if (!old)
		return malloc(size);
	if (!size) {
		free(old);
		return NULL;
	}
	p = may_allocate() ? __libc_realloc(old, size) : NULL;
	if (!p)
		errno = ENOMEM;         /* @old is untouched, still live */
	return p;
}

void free(void *p)
{
	live -= p != NULL;
	__libc_free(p);
}

char *strndup(const char *s, size_t n)
{
	size_t len = strnlen(s, n);
	char *p = malloc(len + 1);

	if (p) {
		memcpy(p, s, len);
		p[len] = '\0';
	}
	return p;
}

char *strdup(const char *s)
{
	return strndup(s, strlen(s));
}

/*
 * Whether calls to malloc and free from another object reach the ones
 * above (called through pointers the compiler cannot see through, as
 * the code under test, compiled apart, calls them).
 */
static int allocator_is_ours(void)
{
	void *(*volatile m)(size_t) = malloc;
	void (*volatile f)(void *) = free;
	long before = live, taken;
	void *p = m(1);

	taken = live - before;
	f(p);
	return taken == 1 && live == before;
}

/*
 * probe_req_parse: fail its k-th allocation for k = 0, 1, ... until it
 * succeeds.  Each failed call is -ENOMEM and frees the fields it had
 * already copied; the successful one's fields all go with probe_req_free.
 */
static void test_probe_req_parse(void)
{
	const char *text = "usdt:/bin/true:prov:name";
	struct probe_req req;
	char what[160];
	long before, after;
	int rc = -ENOMEM, k, failed = 0;

	for (k = 0; k < 64 && rc == -ENOMEM; k++) {
		before = live;
		countdown = k;
		rc = probe_req_parse(text, &req);
		countdown = -1;
		if (!rc)
			probe_req_free(&req);
		after = live;
		if (rc) {
			failed++;
			snprintf(what, sizeof(what),
				 "probe_req_parse, allocation %d fails: -ENOMEM", k);
			UNIT_EQ_INT(rc, -ENOMEM, what);
		} else {
			UNIT_EQ_STR(req.pr_kind, NULL, "probe_req_free zeroes the request");
		}
		snprintf(what, sizeof(what), "probe_req_parse, allocation %d fails: "
			 "nothing left allocated", k);
		if (!rc)
			snprintf(what, sizeof(what), "probe_req_parse succeeds with %d "
				 "allocations: probe_req_free frees them all", k);
		UNIT_EQ_INT(after - before, 0, what);
	}
	UNIT_EQ_INT(rc, 0, "probe_req_parse succeeds once allocations do");
	/* If none failed, the countdown never reached the allocator. */
	/* Four fields, each its own string: four allocations to fail. */
	UNIT_TRUE(failed >= 4, "every field's allocation was made to fail");
}

/*
 * follow_open with a '*' probe (the follow itself, its table of the '*'
 * requests; the requests are the caller's, parsed before): every
 * allocation failure is -ENOMEM with nothing left; the successful one is
 * undone by follow_close.
 */
static void test_follow_open(void)
{
	struct probe_req req = { .pr_text = "usdt:*:prov:name", .pr_kind = "usdt",
				 .pr_path = "*", .pr_a = "prov", .pr_b = "name" };
	struct follow_opts o = { .fo_attach_pid = -1, .fo_reqs = &req, .fo_nreqs = 1 };
	struct site_set ss = { 0 };
	struct follow *f;
	char what[160];
	long before;
	int rc = -ENOMEM, k, failed = 0;

	for (k = 0; k < 64 && rc == -ENOMEM; k++) {
		before = live;
		countdown = k;
		rc = follow_open(&o, &ss, &f);
		countdown = -1;
		if (!rc) {
			UNIT_TRUE(f != NULL, "follow_open: a '*' probe makes a follow");
			follow_close(f);
		} else {
			failed++;
			snprintf(what, sizeof(what), "follow_open, allocation %d fails: -ENOMEM", k);
			UNIT_EQ_INT(rc, -ENOMEM, what);
		}
		snprintf(what, sizeof(what), "follow_open, allocation %d %s: nothing left allocated",
			 k, rc ? "fails" : "not needed");
		UNIT_EQ_INT(live - before, 0, what);
	}
	UNIT_EQ_INT(rc, 0, "follow_open succeeds once allocations do");
	UNIT_TRUE(failed >= 2, "the follow's and its request table's allocations were made to fail");
}
#endif

int main(void)
{
#ifdef NOMEM_SKIP
	UNIT_TRUE(1, "allocation failures # SKIP the sanitizer owns malloc");
#else
	if (allocator_is_ours()) {
		test_probe_req_parse();
		test_follow_open();
	}
	else
		UNIT_TRUE(1, "allocation failures # SKIP malloc is not ours (valgrind?)");
#endif
	return unit_done();
}
