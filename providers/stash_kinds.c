/*
 * stash_kinds.c — the kinds of item a stash record may hold, each with the
 * functions of the module that makes such items.  Kept out of stash.c so
 * that the stash depends on no attach mode (attach_tracefs.c uses it).
 */
#include <stddef.h>
#include "attach_tracefs.h"
#include "stash.h"

static const struct stash_kind tracefs_kind = {
	.sk_name = "tracefs",
	.sk_check = tfs_item_check,
	.sk_undo = tfs_item_remove,
};

const struct stash_kind *const stash_kinds[] = {
	&tracefs_kind,
	NULL,
};
