/*
 * realfile.h — the file the kernel keys a uprobe on.
 *
 * A uprobe belongs to an inode: the kernel takes d_real_inode() of the
 * path it is given (trace_uprobe, uprobe_multi), and overlayfs maps the
 * real file, so a hit's vm_file is the real file too.  stat() of a file
 * on overlayfs names the overlay's inode instead: its own device, and for
 * a file copied up to the upper layer still the inode number of its
 * origin.  Two paths to one file then look like two files: the
 * container's (through /proc/PID/root) and the host's layer directory, or
 * two containers started from one image, and a tracer that trusts stat()
 * attaches twice and reports each hit twice (bpftrace#5102, bcc#2715).
 *
 * realfile_id() finds the real file as overlayfs does: the first layer,
 * upper then lowers in order, that holds the path (a whiteout ends the
 * search), the layers read from the overlay's line in mountinfo (the
 * mount namespace of /proc/PID/root when the path goes through one).  A
 * candidate must be a regular file of the opened file's size.  Not
 * resolved (layer directories not visible from here, a metacopy upper
 * file, a name that moved): stat()'s identity, said at debug level.
 */
#ifndef PC_REALFILE_H
#define PC_REALFILE_H

#include <stdint.h>

/* @fd: the file opened by @path.  Sets *@kdev (kernel dev_t encoding,
 * as a BPF program reads i_sb->s_dev) and *@ino; 0 or -errno (fstat
 * failed, or -ENOMEM). */
int realfile_id(int fd, const char *path, uint64_t *kdev, uint64_t *ino);

/* The kernel's encoding of a device number (MKDEV: major << 20 | minor). */
uint64_t realfile_kdev(uint64_t dev);

#endif
