/*
 * fuzz.h — what the fuzz targets share (suites/fuzz/README.md).
 *
 * A target is an ordinary function, int fuzz_NAME(const uint8_t *data,
 * size_t size), defined by PC_FUZZ_TARGET(NAME) in fuzz_NAME.c.  Built for
 * libFuzzer (clang -fsanitize=fuzzer, -DPC_LIBFUZZER: `make fuzz`) the file
 * also defines LLVMFuzzerTestOneInput calling it; built with gcc into the
 * unit test test_fuzzreplay, the function is called on every committed
 * input.  A target returns 0 whatever the input: a problem is a crash, a
 * sanitizer report, a leak or a broken invariant (fuzz_check, abort).
 */
#ifndef PC_FUZZ_H
#define PC_FUZZ_H

#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#ifdef PC_LIBFUZZER
#define PC_FUZZ_ENTRY(name)						\
	int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)	\
	{								\
		return fuzz_##name(data, size);				\
	}
#else
#define PC_FUZZ_ENTRY(name)
#endif

#define PC_FUZZ_TARGET(name)						\
	int fuzz_##name(const uint8_t *data, size_t size);		\
	PC_FUZZ_ENTRY(name)						\
	int fuzz_##name(const uint8_t *data, size_t size)

/* An invariant of the code under test: broken, it is a crash to keep. */
#define fuzz_check(cond) do {						\
	if (!(cond)) {							\
		fprintf(stderr, "fuzz: %s:%d: invariant '%s' broken\n",	\
			__FILE__, __LINE__, #cond);			\
		abort();						\
	}								\
} while (0)

/* @data as a C string (a copy, NUL-terminated: it may hold NULs). */
static inline char *fuzz_str(const uint8_t *data, size_t size)
{
	char *s = malloc(size + 1);

	if (!s)
		abort();
	memcpy(s, data, size);
	s[size] = '\0';
	return s;
}

/*
 * A file holding @n bytes of @p, @size bytes long (a hole after @n when
 * larger: memfd files are sparse, so a large size costs nothing), named
 * by @path ("/proc/self/fd/N") for code that opens paths.  The fd, to
 * close after use, or -1.
 */
static inline int fuzz_memfd(const void *p, size_t n, size_t size,
			     char *path, size_t len)
{
	int fd = memfd_create("pc-fuzz", MFD_CLOEXEC);

	if (fd < 0)
		return -1;
	if ((n && write(fd, p, n) != (ssize_t)n) ||
	    (size > n && ftruncate(fd, size))) {
		close(fd);
		return -1;
	}
	snprintf(path, len, "/proc/self/fd/%d", fd);
	return fd;
}

/*
 * Call with the fd fuzz_memfd gave: every input closes what it opened, so
 * the lowest free descriptor, which memfd_create takes, stays where it
 * was for the first input (a little slack for libFuzzer's own files).
 * A target that leaks a descriptor per input trips this within a few
 * inputs; test_fuzzreplay counts them exactly.
 */
static inline void fuzz_fd_check(int fd)
{
	static int first = -1;

	if (first < 0)
		first = fd;
	fuzz_check(fd <= first + 8);
}

/* Little-endian integers from the front of the input, 0 past its end. */
static inline uint64_t fuzz_take(const uint8_t **p, size_t *n, size_t bytes)
{
	uint64_t v = 0;

	for (size_t i = 0; i < bytes; i++)
		if (i < *n)
			v |= (uint64_t)(*p)[i] << (8 * i);
	bytes = bytes < *n ? bytes : *n;
	*p += bytes;
	*n -= bytes;
	return v;
}

#endif
