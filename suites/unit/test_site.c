/*
 * test_site.c — the site set (providers/site.c): sorting and dropping
 * duplicates.  Two PROBE arguments may match the same site; it must be
 * attached once, but an entry and a return probe at one pc are two sites,
 * and so are two sites that differ in any one field of the key (path,
 * pid, provider, name): two copies of a library hold the same pc.
 * site_set_drop_same (follow's late objects: an explicit PATH and '*'
 * naming one file) drops a site an earlier one already is, by path or by
 * inode, and keeps the others in their order; a full set (16 sites, its
 * first capacity) with the copy last moves nothing past its end (ASan in
 * make sanitize, the mutation runner's unit-san).
 */
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "unit.h"
#include "realfile.h"
#include "site.h"

/* A site of /bin/x, provider p, name n, at @pc; strings owned by the set. */
static void add(struct site_set *ss, uint64_t pc, int retprobe)
{
	struct site *st = site_set_add(ss);

	if (!st)
		abort();
	st->st_path = strdup("/bin/x");
	st->st_provider = strdup("p");
	st->st_name = strdup("n");
	st->st_args = strdup("");
	st->st_pc = pc;
	st->st_retprobe = retprobe;
}

static void test_dedup(void)
{
	struct site_set ss = { 0 };

	/* the same return site twice, the same entry site twice: one each */
	for (int ret = 1; ret >= 0; ret--) {
		add(&ss, 0x10, ret);
		add(&ss, 0x10, ret);
		site_set_sort(&ss);
		UNIT_EQ_INT(ss.ss_n, 1, ret ? "same return site twice: one site"
					    : "same entry site twice: one site");
		UNIT_EQ_INT(ss.ss_n ? ss.ss_v[0].st_retprobe : -1, ret,
			    ret ? "... a return site" : "... an entry site");
		site_set_free(&ss);
	}

	/* entry and return at one pc: two, entry first (whatever the order in) */
	for (int order = 0; order < 2; order++) {
		add(&ss, 0x10, !order);
		add(&ss, 0x10, order);
		site_set_sort(&ss);
		UNIT_EQ_INT(ss.ss_n, 2, order ? "entry, return at one pc: two sites"
					     : "return, entry at one pc: two sites");
		if (ss.ss_n == 2) {
			UNIT_EQ_INT(ss.ss_v[0].st_retprobe, 0, "... entry first");
			UNIT_EQ_INT(ss.ss_v[1].st_retprobe, 1, "... return second");
		}
		site_set_free(&ss);
	}

	/* both twice, interleaved, with another pc in between: three */
	add(&ss, 0x10, 1);
	add(&ss, 0x20, 0);
	add(&ss, 0x10, 0);
	add(&ss, 0x10, 1);
	add(&ss, 0x10, 0);
	site_set_sort(&ss);
	UNIT_EQ_INT(ss.ss_n, 3, "entry and return twice each, another pc: three");
	if (ss.ss_n == 3) {
		UNIT_TRUE(ss.ss_v[0].st_pc == 0x10 && !ss.ss_v[0].st_retprobe, "... 0x10 entry");
		UNIT_TRUE(ss.ss_v[1].st_pc == 0x10 && ss.ss_v[1].st_retprobe, "... 0x10 return");
		UNIT_TRUE(ss.ss_v[2].st_pc == 0x20, "... 0x20 last");
	}
	site_set_free(&ss);
}

/* Sites equal but for one field of the key: two, the smaller first. */
static void test_key_fields(void)
{
	static const char *const field[] = { "path", "pid", "provider", "name" };

	for (int f = 0; f < 4; f++) {
		struct site_set ss = { 0 };
		char what[96];

		for (int k = 1; k >= 0; k--) {      /* the larger one first */
			add(&ss, 0x10, 0);
			struct site *st = &ss.ss_v[ss.ss_n - 1];

			if (f == 0) {
				free(st->st_path);
				st->st_path = strdup(k ? "/lib/b.so" : "/lib/a.so");
			}
			st->st_pid = f == 1 ? 100 + k : 0;
			if (f == 2)
				st->st_provider[0] = k ? 'q' : 'p';
			if (f == 3)
				st->st_name[0] = k ? 'o' : 'n';
		}
		site_set_sort(&ss);
		snprintf(what, sizeof(what), "one pc, another %s: two sites", field[f]);
		UNIT_EQ_INT(ss.ss_n, 2, what);
		snprintf(what, sizeof(what), "... the smaller %s first", field[f]);
		UNIT_TRUE(ss.ss_n == 2 &&
			  (f == 0 ? !strcmp(ss.ss_v[0].st_path, "/lib/a.so") :
			   f == 1 ? ss.ss_v[0].st_pid == 100 :
			   f == 2 ? ss.ss_v[0].st_provider[0] == 'p' :
				    ss.ss_v[0].st_name[0] == 'n'), what);
		site_set_free(&ss);
	}
}

/* Site @name at offset @off of @file (its open path), into @ss, its file
 * identified as elf_obj_place does (realfile.h: stat's, off overlayfs). */
static void add_in(struct site_set *ss, const char *file, uint64_t off, const char *name)
{
	struct site *st = site_set_add(ss);
	struct stat sb;

	if (!st || stat(file, &sb))
		abort();
	st->st_kdev = realfile_kdev(sb.st_dev);
	st->st_ino = sb.st_ino;
	st->st_path = strdup(file);
	st->st_open_path = strdup(file);
	st->st_provider = strdup("p");
	st->st_name = strdup(name);
	st->st_args = strdup("");
	st->st_off = off;
}

static void test_drop_same(void)
{
	struct site_set ss = { 0 };
	char name[16];
	int order = 1;

	/* 15 sites of this executable, then the first again by another path
	 * to its inode: the set is full, the copy last. */
	for (int i = 0; i < 15; i++) {
		snprintf(name, sizeof(name), "n%d", i);
		add_in(&ss, "/proc/self/exe", 0x100 + i, name);
	}
	add_in(&ss, "/proc/self/exe", 0x100, "n0");
	UNIT_EQ_INT(ss.ss_cap, 16, "a full set: 16 sites, its first capacity");
	free(ss.ss_v[15].st_open_path);
	ss.ss_v[15].st_open_path = realpath("/proc/self/exe", NULL);
	site_set_drop_same(&ss, 1);
	UNIT_EQ_INT(ss.ss_n, 15, "the first site again by its inode, last: dropped");
	/* A copy in the middle, one in another file, one another name. */
	add_in(&ss, "/proc/self/exe", 0x101, "n1");
	add_in(&ss, "/bin/sh", 0x102, "n2");
	add_in(&ss, "/proc/self/exe", 0x102, "other");
	add_in(&ss, "/proc/self/exe", 0x103, "n3");
	add_in(&ss, "/proc/self/exe", 0x200, "last");
	site_set_drop_same(&ss, 15);
	UNIT_EQ_INT(ss.ss_n, 18, "two more copies dropped; another file, another name kept");
	for (int i = 0; i < 15; i++)
		order &= ss.ss_v[i].st_off == 0x100 + (uint64_t)i;
	UNIT_TRUE(order && ss.ss_n == 18 && !strcmp(ss.ss_v[15].st_open_path, "/bin/sh") &&
		  !strcmp(ss.ss_v[16].st_name, "other") && !strcmp(ss.ss_v[17].st_name, "last"),
		  "... the others in their order");
	/* A return probe where an entry probe is: another site. */
	add_in(&ss, "/proc/self/exe", 0x100, "n0");
	ss.ss_v[18].st_retprobe = 1;
	site_set_drop_same(&ss, 18);
	UNIT_EQ_INT(ss.ss_n, 19, "a return probe at an entry probe's offset: kept");
	/* The kernel's identity decides, not the path: the same path with
	 * another identity is another file (a file replaced), and a site
	 * whose identity is unknown (0) is compared by path. */
	add_in(&ss, "/proc/self/exe", 0x101, "n1");
	ss.ss_v[19].st_ino ^= 1;
	add_in(&ss, "/proc/self/exe", 0x102, "n2");
	ss.ss_v[20].st_ino = 0;
	site_set_drop_same(&ss, 19);
	UNIT_EQ_INT(ss.ss_n, 20, "another inode at the same path: kept; unknown identity, same path: dropped");
	UNIT_TRUE(ss.ss_n == 20 && ss.ss_v[19].st_off == 0x101, "... the kept one is the other inode's");
	site_set_free(&ss);
}

int main(void)
{
	test_dedup();
	test_key_fields();
	test_drop_same();
	return unit_done();
}
