/*
 * test_install.c — install_check_here without the kernel: sites where no
 * uprobe is registered read as the file's own bytes, so each is reported
 * as dropped (-PC_ENOTSUPP, named); what this test is for is the cost:
 * one object is mapped once per check, however many of its sites are read
 * and whatever path names it (its device and inode decide).
 */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
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

/* A 64-byte object of nops at PATH (a mkstemp template), with an int3 at
 * @int3_at unless it is negative.  0, or -1 (said as a failed check). */
static int nop_object(char *path, int int3_at)
{
	unsigned char bytes[64];
	int fd = mkstemp(path), ok;

	if (fd < 0) {
		UNIT_TRUE(0, "mkstemp");
		return -1;
	}
	memset(bytes, 0x90, sizeof(bytes));
	if (int3_at >= 0)
		bytes[int3_at] = 0xcc;
	ok = write(fd, bytes, sizeof(bytes)) == (ssize_t)sizeof(bytes);
	UNIT_TRUE(ok, "write the object");
	close(fd);
	return ok ? 0 : -1;
}

/* An int3 that is the file's own byte (a program's own breakpoint, or a
 * file rewritten by a debugger) says nothing of a uprobe: the site reads
 * as not installed, unlike a 0xcc over any other byte (the kernel's). */
static void test_own_int3(void)
{
	char path[] = "/tmp/pc-install.XXXXXX";
	struct site_set ss = { 0 };

	if (nop_object(path, 16))
		return;
	add(&ss, path, 16);
	UNIT_EQ_INT(install_check_here(&ss, 0, NULL), -PC_ENOTSUPP,
		    "a site on the file's own int3 (0xcc in the file too): not installed");
	site_set_free(&ss);
	unlink(path);
}

/* A site past the end of its file (the file cut since its notes were
 * read): refused with that reason, never a read error. */
static void test_site_past_end(void)
{
	char path[] = "/tmp/pc-install.XXXXXX";
	struct site_set ss = { 0 };
	int rc;

	if (nop_object(path, -1))
		return;
	add(&ss, path, 64);
	unit_capture(1);
	rc = install_check_here(&ss, 0, NULL);
	unit_capture(0);
	UNIT_EQ_INT(rc, -EINVAL, "a site at the file's size: -EINVAL");
	UNIT_TRUE(strstr(unit_captured, "offset 0x40 beyond the file") != NULL,
		  "its message says the offset is beyond the file");
	site_set_free(&ss);
	unlink(path);
}

/* A site on the file's last byte: one byte to read, which is enough to
 * judge it (not installed here, no uprobe), never a read error (mutant
 * b767134e of draw fresh-20261207-e took a 1-byte read for a failure). */
static void test_site_last_byte(void)
{
	char path[] = "/tmp/pc-install.XXXXXX";
	struct site_set ss = { 0 };
	int rc;

	if (nop_object(path, -1))
		return;
	add(&ss, path, 63);
	unit_capture(1);
	rc = install_check_here(&ss, 0, NULL);
	unit_capture(0);
	UNIT_EQ_INT(rc, -PC_ENOTSUPP, "a site on the last byte: read, judged not installed");
	UNIT_TRUE(strstr(unit_captured, "offset 0x3f (") && strstr(unit_captured, "not installed"),
		  "its message names the site and says not installed");
	site_set_free(&ss);
	unlink(path);
}

int main(void)
{
	test_one_mapping_per_object();
	test_own_int3();
	test_site_past_end();
	test_site_last_byte();
	return unit_done();
}
