/*
 * pc-insmod — load a kernel module file, for the guest's init
 * (harness/kernels/vm/init): the guest has no kmod, and the modules it
 * needs (overlayfs, for suites/containers.bats) come uncompressed from
 * the kernel's own package (harness/kernels/vm-run).
 *
 *   pc-insmod MODULE.ko
 *
 * finit_module(2) with no parameters.  Exit: 0 loaded or already there
 * (EEXIST), 1 the kernel refused it (the reason on stderr), 2 bad usage
 * or unreadable.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/syscall.h>

int main(int argc, char **argv)
{
	int fd;

	if (argc != 2) {
		fprintf(stderr, "usage: pc-insmod MODULE.ko\n");
		return 2;
	}
	fd = open(argv[1], O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		fprintf(stderr, "pc-insmod: '%s': %s\n", argv[1], strerror(errno));
		return 2;
	}
	if (syscall(SYS_finit_module, fd, "", 0) && errno != EEXIST) {
		fprintf(stderr, "pc-insmod: '%s': the kernel refused it: %s\n",
			argv[1], strerror(errno));
		return 1;
	}
	close(fd);
	return 0;
}
