/*
 * attach_tracefs.h — the tracefs attach mode: named uprobe_events entries,
 * one per site, named by tracer and (device, inode, offset, entry/return),
 * recorded in the stash before they exist and removed by exact name after
 * use.
 */
#ifndef PC_ATTACH_TRACEFS_H
#define PC_ATTACH_TRACEFS_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include "site.h"
#include "stash.h"

/* MAX_EVENT_NAME_LEN in kernel/trace/trace_probe.h, NUL included. */
#define TFS_NAME_MAX 64

struct tfs_entry;

/*
 * Name and record in the stash every entry the @n sites of @v need,
 * before any is created.  0 or -errno with a message.
 */
int  tfs_prepare(const struct site *v, size_t n);
/*
 * A perf event fd for @st in process @pid (-1: every process): its
 * recorded entry is created, then opened as a PERF_TYPE_TRACEPOINT event.
 * *@ent is the entry, to give back with tfs_release.  -errno: a tracefs failure comes with a message,
 * a perf_event_open failure without (the caller names the site).
 */
int  tfs_perf_open(const struct site *st, pid_t pid, struct tfs_entry **ent);
/*
 * Give back @n entries (NULLs allowed), after their perf fds are closed:
 * they are removed from tracefs (with any recorded but never opened),
 * then the stash record is rewritten (deleted when nothing is left).
 */
void tfs_release(struct tfs_entry **ents, size_t n);

/* "probecheck_PID_START": the group of every entry of tracer @id. */
void tfs_group_name(const struct tracer_id *id, char *buf, size_t len);
/* "p_DEV_INO_OFF" / "r_...", lower-case hex; "_SEQ" appended if @seq. */
void tfs_event_name(uint64_t dev, uint64_t ino, uint64_t off, int ret,
		    unsigned seq, char *buf, size_t len);

/* For the stash: is "GROUP/EVENT" a name of @owner's scheme?  0/-EINVAL. */
int  tfs_item_check(const struct tracer_id *owner, const char *name);
/* Remove entry "GROUP/EVENT" by exact name: 0, -ENOENT (gone), -errno. */
int  tfs_item_remove(const char *name);

#endif
