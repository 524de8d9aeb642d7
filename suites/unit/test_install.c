/*
 * test_install.c — install_check_here without the kernel: sites where no
 * uprobe is registered read as the file's own bytes, so each is reported
 * as dropped (-PC_ENOTSUPP, named); what this test is for is the cost:
 * one object is mapped once per check, however many of its sites are read
 * and whatever path names it (its device and inode decide).
 */
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include "unit.h"
#include "install_check.h"
#include "log.h"
#include "site.h"
#include "unitsite.h"

static void add(struct site_set *ss, const char *path, uint64_t off)
{
	if (unit_site_add(ss, path, off))
		UNIT_TRUE(0, "site_set_add");
}

static void test_one_mapping_per_object(void)
{
	struct site_set ss = { 0 };
	char self[PATH_MAX];
	unsigned long before;
	int rc;

	if (!realpath("/proc/self/exe", self)) {
		UNIT_TRUE(0, "realpath of /proc/self/exe");
		return;
	}
	/* The same file under two names, three sites; then another file. */
	add(&ss, "/proc/self/exe", 0x40);
	add(&ss, self, 0x80);
	add(&ss, "/proc/self/exe", 0xc0);
	before = install_check_mappings();
	rc = install_check_here(&ss, 0, NULL);
	UNIT_EQ_INT(rc, -PC_ENOTSUPP, "sites with no uprobe read as dropped");
	UNIT_EQ_INT((int)(install_check_mappings() - before), 1,
		    "three sites of one object, under two paths: one mapping");
	add(&ss, "/bin/sh", 0x40);
	before = install_check_mappings();
	install_check_here(&ss, 0, NULL);
	UNIT_EQ_INT((int)(install_check_mappings() - before), 2,
		    "a second object: a second mapping");
	before = install_check_mappings();
	install_check_here(&ss, 3, NULL);
	UNIT_EQ_INT((int)(install_check_mappings() - before), 1,
		    "sites from 'first' only: the second object alone");
	site_set_free(&ss);
}

int main(void)
{
	test_one_mapping_per_object();
	return unit_done();
}
