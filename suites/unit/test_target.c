/*
 * test_target.c — what a PROBE's PATH means in a process (target.c) when
 * the process does not map it: the file through /proc/PID/root, opened by
 * that whole name.  A name that fits PATH_MAX exactly is kept whole; one
 * longer is refused with ENAMETOOLONG and a message naming it, never cut
 * to another file's name.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include "unit.h"
#include "procmaps.h"
#include "provider.h"
#include "target.h"

static char seen[8192];

static int record(const struct probe_req *req, const struct target_obj *ob,
		  void *ctx, struct site_set *out)
{
	snprintf(seen, sizeof(seen), "%s", ob->ob_opened);
	return 0;
}

/* target_resolve for PATH @len bytes long in this process (which maps no
 * such file); returns its result, the name opened in seen[]. */
static int resolve_len(size_t len)
{
	static char path[8192];
	struct probe_req req = { .pr_text = "usdt:PATH:p:n", .pr_kind = "usdt",
				 .pr_path = path, .pr_a = "p", .pr_b = "n" };
	struct pm_objects none = { 0 };
	struct target tg = { .tg_pid = getpid(), .tg_maps = &none };
	struct site_set out = { 0 };

	memset(path, 'a', len);
	path[0] = '/';
	path[len] = 0;
	seen[0] = 0;
	return target_resolve(&req, &tg, record, NULL, &out);
}

/* Two sites, as a provider adds them. */
static int two_sites(const struct probe_req *req, const struct target_obj *ob,
		     void *ctx, struct site_set *out)
{
	for (int i = 0; i < 2; i++)
		if (!site_set_add(out))
			return -ENOMEM;
	return 2;
}

/* --str and --buf reach every site a request made (one_object): the
 * masks and each buffer's length, the other slots' lengths 0. */
static void test_options_reach_sites(void)
{
	struct probe_req req = { .pr_text = "usdt:/bin/sh:p:n", .pr_kind = "usdt",
				 .pr_path = "/bin/sh", .pr_a = "p", .pr_b = "n",
				 .pr_str_mask = 0x5, .pr_buf_mask = 0x802 };
	struct pm_objects none = { 0 };
	struct target tg = { .tg_pid = 0, .tg_maps = &none };
	struct site_set out = { 0 };
	int ok = 1;

	req.pr_buf_len[1] = 64;
	req.pr_buf_len[11] = 256;
	UNIT_EQ_INT(target_resolve(&req, &tg, two_sites, NULL, &out), 2,
		    "two sites resolved");
	for (size_t i = 0; i < out.ss_n; i++) {
		const struct pc_spec *sp = &out.ss_v[i].st_spec;

		ok &= sp->ps_str_mask == 0x5 && sp->ps_buf_mask == 0x802;
		for (int a = 0; a < PC_MAX_ARGS; a++)
			ok &= sp->ps_args[a].pa_buf_len ==
			      (a == 1 ? 64 : a == 11 ? 256 : 0);
	}
	UNIT_TRUE(out.ss_n == 2 && ok, "every site has the string and buffer "
		  "masks and each buffer's length, the last slot's too");
	site_set_free(&out);
}

int main(void)
{
	char prefix[64], what[160];
	size_t fit;
	int rc;

	/* 4096 bytes with its NUL: the longest name open(2) takes. */
	fit = 4095 - (size_t)snprintf(prefix, sizeof(prefix), "/proc/%d/root", (int)getpid());
	UNIT_EQ_INT(resolve_len(fit), 0, "a name of 4095 bytes through /proc/PID/root: resolved");
	snprintf(what, sizeof(what), "opened as %s + the whole PATH", prefix);
	UNIT_TRUE(strlen(seen) == 4095 && !strncmp(seen, prefix, strlen(prefix)), what);
	unit_capture(1);
	rc = resolve_len(fit + 1);
	unit_capture(0);
	UNIT_EQ_INT(rc, -ENAMETOOLONG, "one byte longer: -ENAMETOOLONG");
	UNIT_EQ_STR(seen, "", "nothing opened under a cut name");
	snprintf(what, sizeof(what), "probecheck: probe 'usdt:PATH:p:n': %s: '%s/aaaa",
		 strerror(ENAMETOOLONG), prefix);
	UNIT_TRUE(!strncmp(unit_captured, what, strlen(what)), "the message says why and names it");
	test_options_reach_sites();
	return unit_done();
}
