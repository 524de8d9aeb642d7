/*
 * test_features.c — the feature registry's cache (features.c): the first
 * answer a row gets stands, whoever gives it (a probe that decides two
 * rows notes the second before that row's own probe runs), and an id out
 * of the table is ignored, not written past the cache.  Then the x86
 * system-call rows, each on its own number: syscall() is interposed here
 * to answer ENOSYS for one number, as a kernel without that call would
 * (seccomp cannot: the kernel lets 335 and 336 through every filter).
 * Each instruction-form row probes its own site: a refusal names the
 * site's first bytes.  The offset of the features' own sites in this
 * executable (procmaps_self_offset) is not fooled by a mapping whose long
 * path holds, past any fixed line buffer, text that reads as a mapping.
 * And the attach modes' table as messages list it, and --attach=auto's
 * choice from the registry's answers, and an enum's values looked up in
 * BTF built here.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <bpf/btf.h>
#include "unit.h"
#include "interpose.h"
#include "attach.h"
#include "features.h"
#include "procmaps.h"

static long enosys_nr = -1;     /* the number answered ENOSYS; -1: none */

static int unit_syscall_fails(long nr)
{
	if (nr != enosys_nr)
		return 0;
	errno = ENOSYS;
	return 1;
}

static void test_first_answer_stands(void)
{
	char why[256];

	feature_note(FEATURE_PROBE_NOP10, 0, "first: decided by another probe");
	feature_note(FEATURE_PROBE_NOP10, 1, NULL);
	UNIT_EQ_INT(feature_has(FEATURE_PROBE_NOP10, why, sizeof(why)), 0,
		    "a second note does not change the first answer");
	UNIT_EQ_STR(why, "first: decided by another probe", "nor its reason");
	feature_note(FEATURE_PROBE_DS_PREFIX, -5, NULL);
	feature_note(FEATURE_PROBE_DS_PREFIX, 1, NULL);
	UNIT_EQ_INT(feature_has(FEATURE_PROBE_DS_PREFIX, why, sizeof(why)), 0,
		    "a probe that could not run: no, and it stands");
	UNIT_EQ_STR(why, "the probe could not run: Input/output error", "its reason names the error");
}

static void test_out_of_table(void)
{
	char why[256];

	/* The sanitizer build sees a write past the cache. */
	feature_note((enum feature_id)(FEATURE_FAKE + 1), 1, NULL);
	feature_note((enum feature_id)(FEATURE_FAKE + 40), 1, NULL);
	UNIT_EQ_INT(feature_has((enum feature_id)(FEATURE_FAKE + 1), why, sizeof(why)), 0,
		    "an id past the table: no");
	UNIT_EQ_STR(why, "no such row in the feature table", "and says why");
	/* The fake row (PROBECHECK_FEATURE_FAKE) is past the table of real
	 * rows: what it needs is its own text, never a read past them. */
	UNIT_EQ_STR(feature_needs(FEATURE_FAKE), "nothing: a test row",
		    "the fake row needs nothing");
	UNIT_TRUE(feature_needs((enum feature_id)(FEATURE_FAKE - 1)) != NULL,
		  "the last real row says what it needs");
}

/* Each row probes its own call: with one of them gone the other answers
 * as it did with both there. */
static void test_syscall_rows(void)
{
	char why[256];
	int ret = feature_probe_x86_syscall(FEATURE_URETPROBE_SYSCALL, why, sizeof(why));
	int up = feature_probe_x86_syscall(FEATURE_UPROBE_SYSCALL, why, sizeof(why));

	for (int k = 0; k < 2; k++) {
		/* 336 gone: uprobe_syscall says no, uretprobe_syscall as before;
		 * then the other way round. */
		enum feature_id gone = k ? FEATURE_URETPROBE_SYSCALL : FEATURE_UPROBE_SYSCALL,
				other = k ? FEATURE_UPROBE_SYSCALL : FEATURE_URETPROBE_SYSCALL;
		char what[128], want[64];

		enosys_nr = k ? 335 : 336;
		snprintf(what, sizeof(what), "%s with %ld answering ENOSYS: no",
			 feature_key(gone), enosys_nr);
		UNIT_EQ_INT(feature_probe_x86_syscall(gone, why, sizeof(why)), 0, what);
		snprintf(want, sizeof(want), "syscall %ld: ENOSYS", enosys_nr);
		UNIT_EQ_STR(why, want, "its reason names the call");
		snprintf(what, sizeof(what), "%s with %ld gone: as before", feature_key(other), enosys_nr);
		UNIT_EQ_INT(feature_probe_x86_syscall(other, why, sizeof(why)), k ? up : ret, what);
	}
	enosys_nr = -1;
}

/* Each instruction-form row registers a uprobe on its own site: where
 * the kernel refuses it, the reason shows that site's bytes (DS 3e, LOCK
 * f0, nop10 66 2e).  No kernel measured yet accepts DS or LOCK, so the
 * answers alone could not tell the two sites apart; where one accepts,
 * only the answer is there to see. */
static void test_insn_rows(void)
{
	static const struct {
		enum feature_id id;
		const char *bytes;
	} rows[] = {
		{ FEATURE_PROBE_NOP10, "a uprobe on 66 2e 0f 1f 84 ..." },
		{ FEATURE_PROBE_DS_PREFIX, "a uprobe on 3e 0f 1f 40 00 ..." },
		{ FEATURE_PROBE_LOCK_PREFIX, "a uprobe on f0 48 83 0c 24 ..." },
	};

	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		char why[256] = "", what[128];
		int r = feature_probe_x86_insn(rows[i].id, why, sizeof(why));

		snprintf(what, sizeof(what), "%s: an answer (%d)", feature_key(rows[i].id), r);
		UNIT_TRUE(r == 0 || r == 1, what);
		if (r != 0)
			continue;
		snprintf(what, sizeof(what), "%s refused: its own site's bytes (%s)",
			 feature_key(rows[i].id), why);
		UNIT_TRUE(!strncmp(why, rows[i].bytes, strlen(rows[i].bytes)), what);
	}
}

/* @n copies of @c at the end of @s (which has room). */
static void add_run(char *s, char c, int n)
{
	size_t l = strlen(s);

	memset(s + l, c, n);
	s[l + n] = 0;
}

/* Where the path of the mapping at @at starts in its /proc/self/maps line. */
static int path_column(const void *at)
{
	char *line = NULL;
	size_t cap = 0;
	unsigned long lo;
	int col = -1;
	FILE *f = fopen("/proc/self/maps", "re");

	while (f && col < 0 && getline(&line, &cap, f) > 0)
		if (sscanf(line, "%lx-", &lo) == 1 && lo == (unsigned long)at && strchr(line, '/'))
			col = (int)(strchr(line, '/') - line);
	free(line);
	if (f)
		fclose(f);
	return col;
}

/*
 * A file mapped below this executable, moved (same inode, so its line
 * keeps its columns) to a path whose text from byte 511 of its line on is
 * "0-ffffffffffff r 0 ": read in 511-byte pieces, the piece would say
 * every address is mapped at offset 0, and the offset asked for after it
 * would be the address itself.
 */
static void test_self_offset_long_path(void)
{
	char dir[] = "/tmp/pc-unit-maps.XXXXXX", path[1024], moved[1024], what[160];
	uint64_t before = 0, after = 1;
	void *at = MAP_FAILED;
	int fd = -1, col = -1;

	UNIT_EQ_INT(procmaps_self_offset((const void *)test_self_offset_long_path, &before), 0,
		    "self offset of a function of this executable");
	if (mkdtemp(dir)) {
		snprintf(path, sizeof(path), "%s/f", dir);
		fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	}
	if (fd >= 0 && !ftruncate(fd, 4096))
		at = mmap((void *)0x10000000, 4096, PROT_READ, MAP_PRIVATE | MAP_FIXED_NOREPLACE, fd, 0);
	if (at != MAP_FAILED)
		col = path_column(at);
	/* dir/AAAA.../BBBB.../0-ffffffffffff r 0 : the padding puts the fake
	 * line at byte 511 of the real one. */
	int pad = 511 - col - (int)strlen(dir) - 2;      /* two '/' */
	UNIT_TRUE(col > 0 && pad >= 2 && pad <= 500, "a mapping of a file of ours below this executable");
	if (col > 0 && pad >= 2 && pad <= 500) {
		int a = pad / 2, b = pad - a - 1;

		snprintf(moved, sizeof(moved), "%s/", dir);
		add_run(moved, 'A', a);
		mkdir(moved, 0700);
		strcat(moved, "/");
		add_run(moved, 'B', b);
		mkdir(moved, 0700);
		strncat(moved, "/0-ffffffffffff r 0 ", sizeof(moved) - strlen(moved) - 1);
		UNIT_EQ_INT(rename(path, moved), 0, "the file moved to its long path");
		UNIT_EQ_INT(procmaps_self_offset((const void *)test_self_offset_long_path, &after), 0,
			    "self offset with the long path mapped below");
		snprintf(what, sizeof(what), "... the same offset as before it (0x%llx), now 0x%llx",
			 (unsigned long long)before, (unsigned long long)after);
		UNIT_TRUE(after == before, what);
		unlink(moved);
		*strrchr(moved, '/') = 0;
		rmdir(moved);
		*strrchr(moved, '/') = 0;
		rmdir(moved);
	}
	if (at != MAP_FAILED)
		munmap(at, 4096);
	if (fd >= 0)
		close(fd);
	unlink(path);
	rmdir(dir);
}

/* The attach modes' names, as --attach's error and the usage list them:
 * every mode, the last after @last_sep; a short buffer cut cleanly. */
static void test_mode_names(void)
{
	char buf[64], tiny[6];

	attach_mode_names(buf, sizeof(buf), " or ");
	UNIT_EQ_STR(buf, "perf, tracefs or multi", "every attach mode, in the table's order");
	attach_mode_names(tiny, sizeof(tiny), "|");
	UNIT_EQ_STR(tiny, "perf,", "a buffer too small: cut, NUL-terminated");
}

/* --attach=auto (attach_choose) on a kernel whose uprobe_multi link
 * exists but filters by thread (before 6.10): multi for a system-wide
 * trace, perf for a per-process one (the link would miss every thread but
 * the main one); a mode asked for by name is kept.  The registry's rows
 * noted first, as that kernel's probe notes them: this runs before any
 * probe of those rows. */
static void test_auto_choice(void)
{
	feature_note(FEATURE_UPROBE_MULTI, 1, NULL);
	feature_note(FEATURE_UPROBE_MULTI_PID, 0,
		     "with a pid, a hit in a second thread of that process was lost");
	UNIT_TRUE(attach_choose(NULL, 1) == &attach_perf_ops,
		  "auto, per process, multi filtering by thread: perf");
	UNIT_TRUE(attach_choose(NULL, 0) == &attach_multi_ops,
		  "auto, system-wide: multi");
	UNIT_TRUE(attach_choose(&attach_tracefs_ops, 1) == &attach_tracefs_ops,
		  "a mode asked for by name: kept");
}

/* PROBECHECK_FEATURE_FAKE is read once (first here, before anything
 * asks for the table): a bad key refused once, not at every question,
 * and a key set later changes nothing. */
/*
 * The kernel's BTF is asked whether enum bpf_func_id has a value: built
 * here with libbpf, the enum is followed by a type named as the value
 * asked for, so a walk one past the enum's last value reads that type's
 * name offset as a value's and finds it.
 */
static void test_btf_enum_value(void)
{
	struct btf *btf = btf__new_empty();

	UNIT_TRUE(btf != NULL, "an empty BTF");
	if (!btf)
		return;
	UNIT_TRUE(btf__add_enum(btf, "bpf_func_id", 4) > 0, "enum added");
	UNIT_TRUE(!btf__add_enum_value(btf, "BPF_FUNC_unspec", 0), "a value");
	UNIT_TRUE(!btf__add_enum_value(btf, "BPF_FUNC_map_lookup_elem", 1), "a second");
	UNIT_TRUE(btf__add_int(btf, "BPF_FUNC_find_vma", 4, 0) > 0, "a type after it");
	UNIT_EQ_INT(feature_btf_has_enum_value(btf, "bpf_func_id", "BPF_FUNC_unspec"), 1,
		    "the first value found");
	UNIT_EQ_INT(feature_btf_has_enum_value(btf, "bpf_func_id", "BPF_FUNC_map_lookup_elem"), 1,
		    "the last value found");
	UNIT_EQ_INT(feature_btf_has_enum_value(btf, "bpf_func_id", "BPF_FUNC_find_vma"), 0,
		    "a value the enum lacks, named by the type after it: not found");
	UNIT_EQ_INT(feature_btf_has_enum_value(btf, "bpf_prog_type", "BPF_FUNC_unspec"), 0,
		    "an enum the BTF lacks: not found");
	UNIT_EQ_INT(feature_btf_has_enum_value(btf, "BPF_FUNC_find_vma", "BPF_FUNC_find_vma"), 0,
		    "a type of that name that is no enum: not found");
	btf__free(btf);
}

static void test_fake_read_once(void)
{
	const char *p;
	int n = 0;

	setenv("PROBECHECK_FEATURE_FAKE", "Not-a-key", 1);
	unit_capture(1);
	UNIT_EQ_INT(feature_count(), FEATURE_FAKE, "a bad fake key: no fake row");
	UNIT_EQ_INT(feature_count(), FEATURE_FAKE, "... asked again: none");
	unit_capture(0);
	for (p = unit_captured; (p = strstr(p, "not a key")); p++)
		n++;
	UNIT_EQ_INT(n, 1, "... refused once, not at every question");
	setenv("PROBECHECK_FEATURE_FAKE", "pc_fake_later", 1);
	UNIT_EQ_INT(feature_count(), FEATURE_FAKE, "a good key set later: still none (read once)");
	unsetenv("PROBECHECK_FEATURE_FAKE");
}

int main(void)
{
	test_fake_read_once();
	test_btf_enum_value();
	test_auto_choice();
	test_mode_names();
	test_syscall_rows();
	test_insn_rows();
	test_self_offset_long_path();
	test_first_answer_stands();
	test_out_of_table();
	return unit_done();
}
