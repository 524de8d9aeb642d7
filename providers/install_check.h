/*
 * install_check.h — verify that the kernel installed every attached site
 * in an object mapped after the attach (install_check.c says why and how).
 */
#ifndef PC_INSTALL_CHECK_H
#define PC_INSTALL_CHECK_H

#include <sys/types.h>
#include "site.h"

/*
 * Map the objects of sites @first.. of @ss in the calling process and
 * check each site holds int3 there (only those with @only[i - first]
 * set, every one if @only is NULL).  Meaningful only where the sites'
 * uprobes apply to the caller's mm.  0; -PC_ENOTSUPP (524, log.h) when some site
 * was not installed, each one named on stderr; -errno if the check could
 * not run.
 */
int install_check_here(const struct site_set *ss, size_t first,
		       const unsigned char *only);

/*
 * For sites attached for @pid alone: those whose object @pid has not
 * mapped are checked in the caller's mm through a uprobe of its own at
 * each, removed afterwards.  Returns as install_check_here.
 */
int install_check_pid(const struct site_set *ss, size_t first, pid_t pid);

/*
 * Objects the install checks of this process have mapped: one per object
 * and check, however many of its sites the check reads (by device and
 * inode, whatever path names it).  Only cost depends on it, so a test
 * reads it here.
 */
unsigned long install_check_mappings(void);

#endif
