/*
 * realfile.c — the file the kernel keys a uprobe on (realfile.h).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/sysmacros.h>
#include <sys/xattr.h>
#include "log.h"
#include "realfile.h"

#define RF_OVERLAYFS_MAGIC 0x794c7630

uint64_t realfile_kdev(uint64_t dev)
{
	return (uint64_t)major(dev) << 20 | minor(dev);
}

/* mountinfo's octal escapes undone in place: \040 a space, \054 a comma,
 * \134 a backslash (overlayfs's "\:", a colon in a layer's name, shows
 * as "\134:"). */
static void unescape(char *s)
{
	char *w = s;

	for (; *s; s++) {
		if (s[0] == '\\' && s[1] >= '0' && s[1] <= '3' &&
		    s[2] >= '0' && s[2] <= '7' && s[3] >= '0' && s[3] <= '7') {
			*w++ = (char)((s[1] - '0') << 6 | (s[2] - '0') << 3 | (s[3] - '0'));
			s += 3;
		} else {
			*w++ = *s;
		}
	}
	*w = 0;
}

/* A layer's name: overlayfs's backslash escapes undone in place. */
static void unescape_layer(char *s)
{
	char *w = s;

	for (; *s; s++)
		*w++ = s[0] == '\\' && s[1] ? *++s : *s;
	*w = 0;
}

/* The mount id fd @fd is on (/proc/self/fdinfo), or -errno. */
static int fd_mnt_id(int fd)
{
	char path[64], line[256];
	int id = -ENOENT;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
	if (!(f = fopen(path, "re")))
		return -errno;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "mnt_id: %d", &id) == 1)
			break;
	fclose(f);
	return id;
}

struct rf_mount {
	char *rm_line;                  /* the line, cut in place */
	char *rm_root, *rm_point, *rm_opts;
};

/* Mount @id's line of the mountinfo file @path: 1 found, 0 not there,
 * -ENOMEM.  Fields: id parent maj:min root point opts [tags] - type
 * source super-opts. */
static int find_mount(const char *path, int id, struct rf_mount *m)
{
	char *line = NULL, *f[5], *sep, *sp;
	size_t cap = 0;
	int found = 0, err;
	FILE *mi = fopen(path, "re");

	if (!mi)
		return errno == ENOMEM ? -ENOMEM : 0;
	while (!found && getline(&line, &cap, mi) > 0) {
		if (atoi(line) != id || !(sep = strstr(line, " - ")))
			continue;
		f[0] = strtok_r(line, " ", &sp);
		for (int i = 1; i < 5 && f[i - 1]; i++)
			f[i] = strtok_r(NULL, " ", &sp);
		/* after " - ": type, source, super options */
		if (!f[4] || !strtok_r(sep + 3, " ", &sp) ||
		    !strtok_r(NULL, " ", &sp) || !(m->rm_opts = strtok_r(NULL, " \n", &sp)))
			continue;
		m->rm_root = f[3];
		m->rm_point = f[4];
		found = 1;
	}
	/* Unreadable is not found; only out of memory is ours. */
	err = ferror(mi) && errno == ENOMEM ? -ENOMEM : 0;
	fclose(mi);
	if (found) {
		m->rm_line = line;
		unescape(m->rm_root);
		unescape(m->rm_point);
		return 1;
	}
	free(line);
	return err;
}

/* *@out: a copy of super option @key's value in @opts ("upperdir"),
 * mountinfo's escapes undone.  1, 0 absent, -ENOMEM. */
static int opt_value(const char *opts, const char *key, char **out)
{
	size_t kl = strlen(key);

	for (const char *p = opts; p; p = strchr(p, ',')) {
		if (*p == ',')
			p++;
		if (strncmp(p, key, kl) || p[kl] != '=')
			continue;
		if (!(*out = strndup(p + kl + 1, strcspn(p + kl + 1, ","))))
			return -ENOMEM;
		unescape(*out);
		return 1;
	}
	return 0;
}

/* Layer directory @layer's file @rel: 1 it is the real file (*@out), 0
 * not in this layer, -ENOENT a whiteout (deleted above the rest), -ESTALE
 * not the opened file (another kind or size, or a metacopy upper file
 * whose data lives below). */
static int in_layer(const char *layer, const char *rel, off_t size,
		    struct stat *out)
{
	char p[PATH_MAX];
	int n = snprintf(p, sizeof(p), "%s%s", layer, rel);

	if (n < 0 || n >= (int)sizeof(p) || lstat(p, out))
		return 0;
	if (S_ISCHR(out->st_mode) && out->st_rdev == 0)
		return -ENOENT;
	if (!S_ISREG(out->st_mode) || out->st_size != size ||
	    getxattr(p, "trusted.overlay.metacopy", NULL, 0) >= 0 ||
	    getxattr(p, "user.overlay.metacopy", NULL, 0) >= 0)
		return -ESTALE;
	return 1;
}

/* Each layer of @list (mountinfo's escapes undone: ':'-separated, "\:"
 * a colon in a name; "::" before data-only layers) in turn: in_layer's
 * first non-zero answer. */
static int in_layers(char *list, const char *rel, off_t size, struct stat *out)
{
	char *p = list, *start = list;
	int r, end;

	for (;; p++) {
		if (*p == '\\' && p[1]) {
			p++;
			continue;
		}
		if (*p && *p != ':')
			continue;
		end = !*p;
		*p = 0;
		unescape_layer(start);
		if (*start && (r = in_layer(start, rel, size, out)))
			return r;
		if (end)
			return 0;
		start = p + 1;
	}
}

/* The real file of overlay file @fd: 1 found (*@out), 0 not found, or
 * -errno: -ENOENT a whiteout, -ESTALE not the opened file (in_layer),
 * -ENOMEM. */
static int overlay_real(int fd, const char *path, off_t size, struct stat *out)
{
	char fdp[64], at[PATH_MAX], mi[64], rel[PATH_MAX], *layers;
	struct rf_mount m = { 0 };
	int id = fd_mnt_id(fd), pid, r = 0;
	ssize_t n;

	snprintf(fdp, sizeof(fdp), "/proc/self/fd/%d", fd);
	if (id < 0 || (n = readlink(fdp, at, sizeof(at) - 1)) <= 0)
		return id == -ENOMEM ? -ENOMEM : 0;
	at[n] = 0;
	/* Mount ids are unique across namespaces: ours first, then the
	 * namespace of the /proc/PID/root the path went through, where @at
	 * (the link, as that namespace's root sees it) is to be read. */
	r = find_mount("/proc/self/mountinfo", id, &m);
	if (!r && sscanf(path, "/proc/%d/root", &pid) == 1) {
		snprintf(mi, sizeof(mi), "/proc/%d/mountinfo", pid);
		r = find_mount(mi, id, &m);
	}
	if (r <= 0)
		return r;
	r = 0;
	n = strlen(m.rm_point);
	if (!strcmp(m.rm_point, "/"))
		n = 0;
	if (strncmp(at, m.rm_point, n) || (at[n] && at[n] != '/') ||
	    snprintf(rel, sizeof(rel), "%s%s", strcmp(m.rm_root, "/") ? m.rm_root : "",
		     at + n) >= (int)sizeof(rel))
		goto out;
	/* The upper layer first: a copied-up file is there. */
	for (int i = 0; i < 2 && !r; i++) {
		r = opt_value(m.rm_opts, i ? "lowerdir" : "upperdir", &layers);
		if (r > 0) {
			r = in_layers(layers, rel, size, out);
			free(layers);
		}
	}
out:
	free(m.rm_line);
	return r;
}

int realfile_id(int fd, const char *path, uint64_t *kdev, uint64_t *ino)
{
	struct stat sb, real;
	struct statfs fs;
	int r;

	if (fstat(fd, &sb))
		return -errno;
	*kdev = realfile_kdev(sb.st_dev);
	*ino = sb.st_ino;
	if (fstatfs(fd, &fs) || fs.f_type != RF_OVERLAYFS_MAGIC)
		return 0;
	r = overlay_real(fd, path, sb.st_size, &real);
	if (r < 0 && r != -ENOENT && r != -ESTALE)
		return r;
	if (r <= 0) {
		pc_dbg("realfile: '%s' is on overlayfs and its real file was "
		       "not found (%s): its overlay inode is used, and two "
		       "paths to it may attach twice", path,
		       r ? pc_strerror(-r) : "its layers are not visible here");
		return 0;
	}
	*kdev = realfile_kdev(real.st_dev);
	*ino = real.st_ino;
	return 0;
}
