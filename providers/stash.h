/*
 * stash.h — what a tracer leaves behind if it dies, kept on disk so a later
 * probecheck can undo it (the idea of dtprobed's DOF stash, seed 001).
 *
 * One record file per tracer in a root-only directory (/run/probecheck,
 * or $PROBECHECK_STASH), named PID-START where START is field 22 of
 * /proc/PID/stat: a reused pid has another start time, so a record never
 * belongs to the wrong process.  A record lists items, one per line, each
 * "KIND ARG"; the only kind so far is "tracefs GROUP/EVENT" (a named
 * uprobe_events entry, see attach_tracefs.c).  An item is recorded before
 * the thing it names is created and dropped after that thing is destroyed.
 */
#ifndef PC_STASH_H
#define PC_STASH_H

#include <stdio.h>
#include <stddef.h>
#include <sys/types.h>

#define STASH_DEFAULT_DIR "/run/probecheck"
#define STASH_VERSION 1

/* A tracer: pid and start time (clock ticks after boot). */
struct tracer_id {
	pid_t ti_pid;
	unsigned long long ti_start;
};

/* How each kind of item is checked against its owner, and undone. */
struct stash_kind {
	const char *sk_name;    /* "tracefs" */
	int (*sk_check)(const struct tracer_id *owner, const char *arg);
	int (*sk_undo)(const char *arg);        /* -ENOENT: already gone */
};

/* Every kind, NULL-terminated: stash_kinds.c, beside the modes that make
 * the items (so that the stash depends on none of them). */
extern const struct stash_kind *const stash_kinds[];

/* Field 22 of /proc/PID/stat; -ESRCH when there is no such process. */
int  stash_start_time(pid_t pid, unsigned long long *start);
/* This process; 0 or -errno with a message. */
int  stash_self(struct tracer_id *id);
/* 1 if @id still runs (same pid, same start time, not a zombie), else 0. */
int  stash_tracer_alive(const struct tracer_id *id);
/* $PROBECHECK_STASH if set, else STASH_DEFAULT_DIR. */
const char *stash_dir(void);

/*
 * Replace @id's record with @items ("KIND ARG" lines, no newline), written
 * to a temporary file, fsync'ed and renamed; @n == 0 deletes the record.
 * Creates the directory (0700) when needed; refuses one that is a symlink,
 * not a directory, not ours or not 0700.  0 or -errno with a message.
 */
int  stash_record_write(const struct tracer_id *id, char *const *items,
			size_t n);

/*
 * The two readers of stash_cleanup, on what it read (for tests too).
 * A record's file name, "PID-START" or ".PID-START.tmp" (@tmp set), in
 * exactly the form stash_record_write gives it: 0 or -EINVAL.
 */
int  stash_name_parse(const char *name, struct tracer_id *id, int *tmp);
/*
 * A record's text (NUL-terminated, split in place into lines): magic and
 * version, the tracer line matching @id, every item of a known kind
 * naming something of @id's (stash_kind.sk_check).  0 with *@items (free
 * it; the items point into @buf) and *@n, or -EINVAL or -ENOMEM with
 * *@why set.
 */
int  stash_record_parse(char *buf, const struct tracer_id *id, char ***items,
			size_t *n, const char **why);

struct stash_report {
	unsigned sr_removed;    /* records of dead tracers undone and removed */
	unsigned sr_items;      /* items undone (tracefs entries removed) */
	unsigned sr_live;       /* records of live tracers, left alone */
	unsigned sr_refused;    /* malformed or suspicious, left alone */
	unsigned sr_failed;     /* an item could not be undone, record kept */
};

/*
 * Undo the records of dead tracers: every item, then the record.  What was
 * removed goes to @out, one line each (NULL: nowhere).  Problems are
 * reported with pc_err unless @quiet.  Returns 0 when nothing was refused
 * or failed, else -errno of the first problem; an absent directory is 0.
 */
int  stash_cleanup(FILE *out, int quiet, struct stash_report *r);

#endif
