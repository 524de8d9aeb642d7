/*
 * pc-peek — read another process's memory from outside, for the suites.
 *
 *   pc-peek PID ADDR SIZE        SIZE in {1,2,4,8}: print the unsigned value
 *   pc-peek --bytes PID ADDR N   print N bytes (1..4096) as hex, space-separated
 *   pc-peek --file FILE OFF N... the N bytes at each file offset OFF (decimal),
 *                                one line of hex per pair
 *
 * ADDR is hex, with or without 0x.  The suites use the first form to read
 * USDT semaphores (a 16-bit counter the kernel bumps through ref_ctr_offset)
 * and the second to check that a probe site holds its original instruction
 * bytes again once a tracer has gone (an installed uprobe shows as 0xcc,
 * since uprobes replace the page in the traced mapping itself).
 *
 * It reads /proc/PID/mem with pread: no ptrace stop, so the process runs on
 * undisturbed.  --file reads a file the same way: the invariants compare a
 * process's sites with their file's bytes, every site of an object in
 * one start (od took one each).  Exit: 0 ok, 1 a read failed, 2 bad usage.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define PEEK_MAX_BYTES 4096

static void usage(void)
{
	fprintf(stderr,
		"usage: pc-peek PID ADDR SIZE       (SIZE 1, 2, 4 or 8; ADDR hex)\n"
		"       pc-peek --bytes PID ADDR N  (N 1..%d)\n"
		"       pc-peek --file FILE OFF N [OFF N]...\n", PEEK_MAX_BYTES);
}

/* Strict: the whole string, no sign, no overflow. */
static int parse_u64(const char *s, int base, uint64_t *out)
{
	unsigned long long v;
	char *end;

	if (!*s || *s == '-' || *s == '+' || *s == ' ')
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, base);
	if (errno || *end)
		return -EINVAL;
	*out = v;
	return 0;
}

static int parse_args(char **argv, pid_t *pid, uint64_t *addr, uint64_t *n)
{
	uint64_t v;
	const char *a = argv[1];

	if (parse_u64(argv[0], 10, &v) || v == 0 || v > INT32_MAX) {
		fprintf(stderr, "pc-peek: '%s': not a process id\n", argv[0]);
		return -EINVAL;
	}
	*pid = (pid_t)v;
	if (!strncmp(a, "0x", 2) || !strncmp(a, "0X", 2))
		a += 2;
	if (parse_u64(a, 16, addr)) {
		fprintf(stderr, "pc-peek: '%s': not a hex address\n", argv[1]);
		return -EINVAL;
	}
	if (parse_u64(argv[2], 10, n)) {
		fprintf(stderr, "pc-peek: '%s': not a size\n", argv[2]);
		return -EINVAL;
	}
	return 0;
}

/* @n bytes at @addr of @fd; @what names it in a message ("pid 12"). */
static int pread_all(int fd, const char *what, uint64_t addr, void *dst, size_t n)
{
	/* pread's offset is signed; /proc/PID/mem takes the address as is. */
	ssize_t got = pread(fd, dst, n, (off_t)addr);

	if (got < 0) {
		fprintf(stderr, "pc-peek: %s: cannot read %zu bytes at 0x%" PRIx64 ": %s\n",
			what, n, addr, strerror(errno));
		return -EIO;
	}
	if ((size_t)got != n) {
		fprintf(stderr, "pc-peek: %s: short read at 0x%" PRIx64 ": %zd of %zu bytes\n",
			what, addr, got, n);
		return -EIO;
	}
	return 0;
}

static int peek(pid_t pid, uint64_t addr, void *dst, size_t n)
{
	char path[64], what[32];
	int fd, err = 0;

	snprintf(path, sizeof(path), "/proc/%d/mem", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		err = -errno;
		if (err == -ENOENT)
			fprintf(stderr, "pc-peek: pid %d: no such process\n", (int)pid);
		else
			fprintf(stderr, "pc-peek: '%s': %s\n", path, strerror(-err));
		return err;
	}
	snprintf(what, sizeof(what), "pid %d", (int)pid);
	err = pread_all(fd, what, addr, dst, n);
	close(fd);
	return err;
}

static void print_hex(const uint8_t *buf, uint64_t n)
{
	for (uint64_t i = 0; i < n; i++)
		printf("%s%02x", i ? " " : "", buf[i]);
	printf("\n");
}

/* --file FILE OFF N...: every pair checked before anything is read, so
 * bad usage prints nothing on stdout. */
static int peek_file(int argc, char **argv)
{
	uint8_t buf[PEEK_MAX_BYTES];
	uint64_t off, n;
	int fd, i, st = 0;

	if (argc < 3 || argc % 2 == 0) {
		usage();
		return 2;
	}
	for (i = 1; i < argc; i += 2) {
		if (parse_u64(argv[i], 10, &off) || off > INT64_MAX) {
			fprintf(stderr, "pc-peek: '%s': not a file offset\n", argv[i]);
			return 2;
		}
		if (parse_u64(argv[i + 1], 10, &n) || n < 1 || n > PEEK_MAX_BYTES) {
			fprintf(stderr, "pc-peek: '%s': N must be 1..%d\n", argv[i + 1],
				PEEK_MAX_BYTES);
			return 2;
		}
	}
	fd = open(argv[0], O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		fprintf(stderr, "pc-peek: '%s': %s\n", argv[0], strerror(errno));
		return 1;
	}
	for (i = 1; i < argc && !st; i += 2) {
		parse_u64(argv[i], 10, &off);
		parse_u64(argv[i + 1], 10, &n);
		if (pread_all(fd, argv[0], off, buf, n))
			st = 1;
		else
			print_hex(buf, n);
	}
	close(fd);
	return st;
}

static int peek_value(pid_t pid, uint64_t addr, uint64_t size)
{
	uint8_t b1;
	uint16_t b2;
	uint32_t b4;
	uint64_t b8;
	void *p = size == 1 ? (void *)&b1 : size == 2 ? (void *)&b2 :
		  size == 4 ? (void *)&b4 : (void *)&b8;

	if (peek(pid, addr, p, size))
		return 1;
	printf("%" PRIu64 "\n", size == 1 ? b1 : size == 2 ? b2 :
				size == 4 ? b4 : b8);
	return 0;
}

static int peek_bytes(pid_t pid, uint64_t addr, uint64_t n)
{
	uint8_t buf[PEEK_MAX_BYTES];

	if (peek(pid, addr, buf, n))
		return 1;
	print_hex(buf, n);
	return 0;
}

int main(int argc, char **argv)
{
	int bytes = argc > 1 && !strcmp(argv[1], "--bytes");
	uint64_t addr, n;
	pid_t pid;

	if (argc > 1 && !strcmp(argv[1], "--file"))
		return peek_file(argc - 2, argv + 2);
	if (argc != 4 + bytes) {
		usage();
		return 2;
	}
	if (parse_args(argv + 1 + bytes, &pid, &addr, &n))
		return 2;
	if (bytes && (n < 1 || n > PEEK_MAX_BYTES)) {
		fprintf(stderr, "pc-peek: --bytes %s: N must be 1..%d\n", argv[4],
			PEEK_MAX_BYTES);
		return 2;
	}
	if (!bytes && n != 1 && n != 2 && n != 4 && n != 8) {
		fprintf(stderr, "pc-peek: SIZE %s: must be 1, 2, 4 or 8\n", argv[3]);
		return 2;
	}
	return bytes ? peek_bytes(pid, addr, n) : peek_value(pid, addr, n);
}
