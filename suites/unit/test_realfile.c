/*
 * test_realfile.c — the file the kernel keys a uprobe on
 * (providers/realfile.c), on overlayfs mounts made here, in a mount
 * namespace of our own (they go with the process):
 *   - a lower file is the topmost lower layer's (one in two lowers, one
 *     only in the second), a copied-up file the upper layer's, in a
 *     subdirectory too; layer names with a space (mountinfo's \040) and
 *     a colon (overlayfs's "\:");
 *   - a mount only another mount namespace has, reached through
 *     /proc/PID/root: its layers read from /proc/PID/mountinfo;
 *   - layers not visible from here (a tmpfs only that namespace has), and
 *     a metacopy upper file (data below): the overlay's own identity;
 *   - a file not on overlayfs: stat()'s.
 * Allocation failure: test_nomem's provider sweeps run it; the syscalls:
 * test_sysfail.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include "unit.h"
#include "realfile.h"

static char top[] = "/tmp/pc-rf.XXXXXX";

static void put(const char *rel, const char *text)
{
	char p[512];
	FILE *f;

	snprintf(p, sizeof(p), "%s/%s", top, rel);
	f = fopen(p, "w");
	if (!f || fputs(text, f) < 0 || fclose(f)) {
		perror(p);
		exit(1);
	}
}

static void dir(const char *rel)
{
	char p[512];

	snprintf(p, sizeof(p), "%s/%s", top, rel);
	if (mkdir(p, 0755) && errno != EEXIST) {
		perror(p);
		exit(1);
	}
}

/* Layers l1 over "l:2", upper "u p@mnt" (workdir w@mnt) on @mnt; 0 or
 * -errno.  Each mount its own upper layer: overlayfs allows one user. */
static int mount_ovl(const char *mnt, const char *extra)
{
	char opts[2048], m[512];

	snprintf(m, sizeof(m), "u p%s", mnt);
	dir(m);
	snprintf(m, sizeof(m), "w%s", mnt);
	dir(m);
	snprintf(opts, sizeof(opts), "lowerdir=%s/l1:%s/l\\:2,upperdir=%s/u p%s,"
		 "workdir=%s/w%s%s", top, top, top, mnt, top, mnt, extra);
	snprintf(m, sizeof(m), "%s/%s", top, mnt);
	return mount("overlay", m, "overlay", 0, opts) ? -errno : 0;
}

/* realfile_id of @path (relative to top) against stat() of @want. */
static void check_id(const char *path, const char *want, const char *what)
{
	char p[512], w[512];
	uint64_t kdev = 0, ino = 0;
	struct stat sb;
	int fd, err;

	snprintf(p, sizeof(p), path[0] == '/' ? "%.0s%s" : "%s/%s", top, path);
	snprintf(w, sizeof(w), want[0] == '/' ? "%.0s%s" : "%s/%s", top, want);
	fd = open(p, O_RDONLY | O_CLOEXEC);
	err = fd < 0 ? -errno : realfile_id(fd, p, &kdev, &ino);
	UNIT_EQ_INT(err, 0, what);
	if (fd >= 0 && !want[0] ? fstat(fd, &sb) : stat(w, &sb))
		UNIT_TRUE(0, "stat of the expected file");
	UNIT_EQ_INT(kdev, realfile_kdev(sb.st_dev), what);
	UNIT_EQ_INT(ino, sb.st_ino, what);
	if (fd >= 0)
		close(fd);
}

static void test_layers(void)
{
	int fd;

	check_id("m/a", "l1/a", "in both lowers: the topmost lower's");
	check_id("m/d", "l:2/d", "only in the second lower (\"l\\:2\")");
	check_id("m/sub/c", "l1/sub/c", "in a subdirectory");
	fd = open("m/b", O_WRONLY | O_CLOEXEC);     /* copy-up */
	UNIT_TRUE(fd >= 0, "copy-up of b");
	if (fd >= 0)
		close(fd);
	check_id("m/b", "u pm/b", "copied up: the upper layer's (\"u\\040pm\")");
	check_id("l1/a", "l1/a", "not on overlayfs: stat's");
	check_id("m/e", "u pm/e", "made in the overlay: the upper layer's");
}

static void test_bad_fd(void)
{
	uint64_t kdev = 7, ino = 9;

	UNIT_EQ_INT(realfile_id(-1, "m/a", &kdev, &ino), -EBADF, "no file: fstat's error");
	UNIT_TRUE(kdev == 7 && ino == 9, "... and nothing set");
}

/* A child in its own mount namespace mounts @mnt (with its lower on a
 * tmpfs only it has, if @hide), says so on @ready and waits for EOF on
 * @hold.  Returns its pid. */
static pid_t other_ns(const char *mnt, int hide, int r[2], int h[2])
{
	pid_t pid = fork();
	char b, p[512];

	if (pid)
		return pid;
	close(r[0]);
	close(h[1]);
	if (unshare(CLONE_NEWNS) || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL))
		_exit(1);
	if (hide) {
		snprintf(p, sizeof(p), "%s/l1", top);
		if (mount("tmpfs", p, "tmpfs", 0, NULL))
			_exit(1);
		put("l1/a", "hidden a\n");
	}
	if (mount_ovl(mnt, ""))
		_exit(1);
	if (write(r[1], "r", 1) != 1)
		_exit(1);
	(void)!read(h[0], &b, 1);
	_exit(0);
}

static void test_other_ns(int hide)
{
	int r[2], h[2], st;
	char path[512], b;
	pid_t pid;

	if (pipe(r) || pipe(h))
		exit(1);
	pid = other_ns(hide ? "m3" : "m2", hide, r, h);
	close(r[1]);
	close(h[0]);
	UNIT_EQ_INT(read(r[0], &b, 1), 1, "the other namespace mounted");
	snprintf(path, sizeof(path), "/proc/%d/root%s/%s/a", (int)pid, top,
		 hide ? "m3" : "m2");
	if (!hide)
		check_id(path, "l1/a", "a mount of another namespace, through /proc/PID/root");
	else
		check_id(path, "", "its lower layer's path names another file "
			 "here (another size): the overlay's own");
	close(h[1]);
	close(r[0]);
	waitpid(pid, &st, 0);
	UNIT_EQ_INT(st, 0, "the other namespace's child");
}

static void test_metacopy(void)
{
	char p[512];

	if (mount_ovl("m4", ",metacopy=on,redirect_dir=on")) {
		printf("ok - # SKIP metacopy=on: %s\n", strerror(errno));
		return;
	}
	snprintf(p, sizeof(p), "%s/m4/d", top);
	UNIT_EQ_INT(chmod(p, 0600), 0, "a metadata-only copy-up");
	check_id("m4/d", "", "a metacopy upper file (data below): the overlay's own");
}

int main(void)
{
	if (!mkdtemp(top) || unshare(CLONE_NEWNS) ||
	    mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL)) {
		printf("1..0 # SKIP a mount namespace of our own: %s\n", strerror(errno));
		return 0;
	}
	if (chdir(top))
		return 1;
	dir("l1"); dir("l1/sub"); dir("l:2");
	dir("m"); dir("m2"); dir("m3"); dir("m4");
	put("l1/a", "a in l1\n");
	put("l:2/a", "a in l2, shadowed\n");
	put("l:2/d", "d\n");
	put("l1/b", "b, to be copied up\n");
	put("l1/sub/c", "c\n");
	if (mount_ovl("m", "")) {
		printf("1..0 # SKIP overlayfs: %s\n", strerror(errno));
		return 0;
	}
	put("m/e", "e, made in the overlay\n");
	test_layers();
	test_bad_fd();
	test_other_ns(0);
	test_other_ns(1);
	umount2("m", MNT_DETACH);
	test_metacopy();
	umount2("m4", MNT_DETACH);
	if (chdir("/") || system("rm -rf /tmp/pc-rf.*"))
		UNIT_TRUE(0, "cleanup");
	return unit_done();
}
