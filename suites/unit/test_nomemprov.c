/*
 * test_nomemprov.c — out-of-memory paths of what is built on the readers
 * (nomem.h's countdown): the install check, providers resolving a probe
 * into sites, the stash cleanup.  Each failure is -ENOMEM, never an
 * answer about the program: a site "not installed", an object skipped
 * for having no probes, a record removed that was not undone.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <sys/sdt.h>
#include "nomem.h"
#include "attach.h"
#include "attach_tracefs.h"
#include "features.h"
#include "follow.h"
#include "install_check.h"
#include "log.h"
#include "procmaps.h"
#include "provider.h"
#include "session.h"
#include "site.h"
#include "unitsite.h"
#include "stash.h"

#ifndef NOMEM_SKIP
/*
 * stash_cleanup of a dead tracer's record (two tracefs entries that are
 * gone already): a failed allocation is -ENOMEM with the record kept for
 * the next cleanup; a success removed it.  Never a record removed whose
 * items were not all undone, never success with the record still there.
 */
struct clean_ctx {
	char dir[64];
	char rec[96];
	char items[2][192];
};

static void clean_prepare(void *ctx)
{
	struct clean_ctx *c = ctx;
	struct tracer_id id = { 4242, 777 };
	char *v[] = { c->items[0], c->items[1] };

	unit_quiet(1);
	stash_record_write(&id, v, 2);
	unit_quiet(0);
}

static int clean_run(void *ctx)
{
	struct clean_ctx *c = ctx;
	struct stash_report r;
	int rc, kept;

	rc = stash_cleanup(NULL, 1, &r);
	kept = !access(c->rec, F_OK);
	if (!rc)
		UNIT_TRUE(!kept && r.sr_removed == 1, "stash_cleanup succeeded: the record removed");
	else if (!kept)
		UNIT_TRUE(0, "stash_cleanup failed: the record kept for the next one");
	return rc;
}

static void clean_after(void *ctx)
{
	unlink(((struct clean_ctx *)ctx)->rec);
}

static void test_stash_cleanup(void)
{
	static struct clean_ctx c;
	struct tracer_id id = { 4242, 777 };
	struct sweep sw = { "stash_cleanup", clean_prepare, clean_run, clean_after, &c, 3, 0 };
	char group[64], event[96];

	if (access("/sys/kernel/tracing/uprobe_events", W_OK)) {
		UNIT_TRUE(1, "stash_cleanup # SKIP uprobe_events is not writable");
		return;
	}
	snprintf(c.dir, sizeof(c.dir), "/tmp/pc-nomem-stash.%d", (int)getpid());
	snprintf(c.rec, sizeof(c.rec), "%s/4242-777", c.dir);
	if (mkdir(c.dir, 0700) || setenv("PROBECHECK_STASH", c.dir, 1)) {
		UNIT_TRUE(0, "stash_cleanup: a stash of our own");
		return;
	}
	tfs_group_name(&id, group, sizeof(group));
	for (int i = 0; i < 2; i++) {
		tfs_event_name(0x801, 0x1234, 16 * (uint64_t)(i + 1), 0, 0, event, sizeof(event));
		snprintf(c.items[i], sizeof(c.items[i]), "tracefs %s/%s", group, event);
	}
	sweep(&sw);
	UNIT_EQ_INT(rmdir(c.dir), 0, "stash_cleanup: nothing left in the stash");
	unsetenv("PROBECHECK_STASH");
}

/*
 * A provider resolving a probe into sites (target_resolve, the notes or
 * the symbol table, the operands): in a file, in a process (its maps
 * read before, not counted), and '*' (every object the process maps,
 * each one quiet).  A failed allocation is -ENOMEM (or libelf's
 * -ENOEXEC, elf_obj_open above); a success is whole: every site.
 */
struct res_ctx {
	const char *text;
	struct target tg;
	int want;               /* sites a success must give */
	struct probe_req req;
};

static void res_prepare(void *ctx)
{
	struct res_ctx *c = ctx;

	if (probe_req_parse(c->text, &c->req))
		memset(&c->req, 0, sizeof(c->req));
}

static int res_run(void *ctx)
{
	struct res_ctx *c = ctx;
	const struct provider *pv = provider_find(c->req.pr_kind ? c->req.pr_kind : "");
	struct site_set out = { 0 };
	char what[200];
	int rc;

	if (!pv)
		return -EINVAL;
	unit_quiet(1);
	rc = pv->pv_resolve(&c->req, &c->tg, &out);
	unit_quiet(0);
	if (rc >= 0) {
		snprintf(what, sizeof(what), "%s%s: all %d sites, none dropped (%zu)",
			 c->text, c->tg.tg_pid ? " (in a process)" : "", c->want, out.ss_n);
		UNIT_TRUE(rc == c->want && (int)out.ss_n == c->want, what);
		for (size_t i = 0; i < out.ss_n; i++) {
			const struct site *st = &out.ss_v[i];

			snprintf(what, sizeof(what), "%s: site %zu whole (paths, "
				 "provider, name, arguments)", c->text, i);
			UNIT_TRUE(st->st_path && st->st_open_path && st->st_provider &&
				  st->st_name && st->st_args, what);
		}
		rc = 0;
	}
	site_set_free(&out);
	return rc;
}

static void res_after(void *ctx)
{
	probe_req_free(&((struct res_ctx *)ctx)->req);
}

static void resolve_sweep(const char *text, const struct pm_objects *maps, int want)
{
	struct res_ctx c = { text, { maps ? getpid() : 0, maps }, want, { 0 } };
	struct sweep sw = { text, res_prepare, res_run, res_after, &c, 3, -ENOEXEC };

	sweep(&sw);
}

/* The pid provider's probe: a function of our own the compiler keeps. */
__attribute__((noinline, used)) void nomem_pid_target(void)
{
	__asm__ volatile("");
}

static void test_provider_resolve(void)
{
	struct pm_objects maps = { 0 };

	DTRACE_PROBE1(nomem, one, 1);
	DTRACE_PROBE2(nomem, two, 1, 2);
	DTRACE_PROBE3(nomem, three, 1, 2, 3);

	if (procmaps_read(getpid(), 0, &maps)) {
		UNIT_TRUE(0, "provider resolve: our own maps");
		return;
	}
	resolve_sweep("usdt:/proc/self/exe:nomem:*", NULL, 3);
	resolve_sweep("usdt:/proc/self/exe:nomem:*", &maps, 3);
	resolve_sweep("usdt:*:nomem:*", &maps, 3);
	resolve_sweep("pid:/proc/self/exe:nomem_pid_target:entry", NULL, 1);
	resolve_sweep("pid:/proc/self/exe:nomem_pid_target:entry", &maps, 1);
	/* '*' over every object of ours would read libc's thousands of
	 * symbols per allocation swept: over our executable alone. */
	{
		char self[4096];
		ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
		const struct pm_object *po;

		self[n > 0 ? n : 0] = '\0';
		po = procmaps_find(&maps, self);
		if (po) {
			struct pm_objects exe = { (struct pm_object *)po, 1 };

			resolve_sweep("pid:*:nomem_pid_target:entry", &exe, 1);
		} else {
			UNIT_TRUE(0, "our executable among our maps");
		}
	}
	procmaps_free(&maps);
}

/*
 * The install check: install_check_here maps each object once and reads
 * its sites (no uprobe here: each reads as dropped, -PC_ENOTSUPP, the
 * verdict a run must keep); install_check_pid reads the target's maps
 * first (our own pid: every object mapped, nothing to check, 0).  An
 * allocation failure is -ENOMEM, never a verdict on the sites: with the
 * objects opened for their bias, libelf's "corrupt ELF file" on a failed
 * allocation dropped our own executable from our maps, and the check
 * probed it as an object we did not map (PM_NOBIAS, procmaps.h).
 */
/* Lines of /proc/self/maps naming our executable (open and read:
 * nothing allocated inside the countdown); -1 unread. */
static int exe_mappings(void)
{
	static char self[4096], buf[1 << 16];
	ssize_t n, got = 0;
	int fd, count = 0;

	if (!self[0] && readlink("/proc/self/exe", self, sizeof(self) - 1) <= 0)
		return -1;
	fd = open("/proc/self/maps", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	while ((n = read(fd, buf + got, sizeof(buf) - 1 - got)) > 0)
		got += n;
	close(fd);
	buf[got] = 0;
	for (char *l = buf; (l = strstr(l, self)); l += strlen(self))
		count++;
	return count;
}

/* Each run also gives back every mapping it made (a check that fails
 * after mapping the object must unmap it: 03fee7bb kept it). */
static int ic_here_run(void *ctx)
{
	int rc, before = exe_mappings();

	unit_quiet(1);
	rc = install_check_here(ctx, 0, NULL);
	unit_quiet(0);
	if (exe_mappings() != before)
		UNIT_EQ_INT(exe_mappings(), before, "install_check_here: no mapping of the object left");
	return rc == -PC_ENOTSUPP ? 0 : rc ? rc : -EINVAL;
}

static int ic_pid_run(void *ctx)
{
	int rc;

	unit_quiet(1);
	rc = install_check_pid(ctx, 0, getpid());
	unit_quiet(0);
	return rc;
}

/*
 * follow_start with descendants (--follow), root this process: the
 * tracepoint links, then every process of /proc read into growing pid
 * tables (hundreds of processes: several reallocations), then the scan of
 * our maps.  A failure is -ENOMEM with nothing of ours left once the
 * follow is stopped and closed, as the CLI does on its error path.  A new
 * follow per run, made before the countdown; one session for them all
 * (its programs loaded once: a session is libbpf's thousands of
 * allocations, nomem_ours_only, and ~0.1 s of verifier).  Found so:
 * hook_linker and resolve_fresh took a failed allocation for "not a
 * linker" and "no probes here", marked the object searched, and went on.
 */
struct fs_ctx {
	struct probe_req req;
	struct site_set ss;
	struct follow *f;
	struct pc_session *s;
};

static void fs_ctl(void *ctx, const struct pc_event *ev)
{
	follow_ctl(((struct fs_ctx *)ctx)->f, ev);
}

static int fs_open(struct fs_ctx *c)
{
	struct follow_opts fo = { .fo_descendants = 1, .fo_attach_pid = -1,
				  .fo_reqs = &c->req, .fo_nreqs = 1 };

	c->f = NULL;
	return follow_open(&fo, &c->ss, &c->f);
}

static void fs_prepare(void *ctx)
{
	fs_open(ctx);
}

static int fs_run(void *ctx)
{
	struct fs_ctx *c = ctx;
	int rc;

	if (!c->f)
		return -EINVAL;
	unit_capture(1);
	rc = follow_start(c->f, c->s, getpid());
	unit_capture(0);
	/* A success is whole: a failure taken for "not a linker" or "no
	 * probes here" went on quietly, or said so and went on. */
	if (!rc) {
		const unsigned char *hook = dlsym(RTLD_DEFAULT, "_dl_debug_state");

		UNIT_TRUE(hook && *hook == 0xcc,
			  "follow_start succeeded: the linker's dlopen hook is in");
		UNIT_EQ_STR(unit_captured, "", "follow_start succeeded: nothing said");
	}
	return rc;
}

static void fs_after(void *ctx)
{
	struct fs_ctx *c = ctx;

	follow_stop(c->f);
	follow_close(c->f);
	c->f = NULL;
	site_set_free(&c->ss);  /* the caller's: sites found before a failure */
}

static void test_follow_start(void)
{
	struct fs_ctx c = { 0 };
	struct sweep sw = { "follow_start", fs_prepare, fs_run, fs_after, &c, 3, 0 };
	struct session_opts so = { .so_filter_pids = 1, .so_ctl = fs_ctl, .so_ctl_ctx = &c };

	if (probe_req_parse("usdt:*:prov:name", &c.req) || fs_open(&c)) {
		UNIT_TRUE(0, "follow_start: a '*' probe and its follow");
		return;
	}
	so.so_progs = follow_progs(c.f);
	follow_close(c.f);
	c.f = NULL;
	if (session_open(&so, &c.s)) {
		UNIT_TRUE(0, "follow_start: a session");
	} else {
		/* Once whole first: what the session keeps of a follow's
		 * attach (its site tables) is made before the count. */
		fs_prepare(&c);
		UNIT_EQ_INT(fs_run(&c), 0, "follow_start: a first, whole run");
		fs_after(&c);
		nomem_ours_only = 1;
		sweep(&sw);
		nomem_ours_only = 0;
		session_close(c.s);
	}
	probe_req_free(&c.req);
	site_set_free(&c.ss);
}

/*
 * follow_ctl at a barrier: a child of ours stopped as the BPF program
 * stops one (SIGSTOP at exec), its maps read and searched under the
 * countdown.  An allocation that fails is said ("not searched" and
 * ENOMEM's words), never a quiet success; either way the child is continued,
 * or it would stay stopped for good.  The follow is started (uncounted)
 * before each run, as the CLI's is before any barrier.
 */
struct fc_ctx {
	struct fs_ctx fs;
	pid_t child;
};

/* The state letter of /proc/PID/stat (R, S, T, Z, ...); '?' unread.
 * open and read: nothing allocated inside the countdown. */
static char proc_state(pid_t pid)
{
	char path[64], buf[512], *rp;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return '?';
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	buf[n > 0 ? n : 0] = 0;
	rp = strrchr(buf, ')');
	return rp && rp[1] == ' ' && rp[2] ? rp[2] : '?';
}

static void fc_prepare(void *ctx)
{
	struct fc_ctx *c = ctx;
	int st;

	fs_open(&c->fs);
	if (c->fs.f)
		follow_start(c->fs.f, c->fs.s, getpid());
	c->child = fork();
	if (c->child == 0) {
		raise(SIGSTOP);
		_exit(7);
	}
	if (c->child > 0 && (waitpid(c->child, &st, WUNTRACED) != c->child || !WIFSTOPPED(st)))
		c->child = -1;
}

static int fc_run(void *ctx)
{
	struct fc_ctx *c = ctx;
	struct pc_event ev = { .pe_pid = c->child, .pe_args = { PC_CTL_EXEC } };
	char want[128], state;
	int cont;

	if (!c->fs.f || c->child <= 0)
		return -EINVAL;
	unit_capture(1);
	follow_ctl(c->fs.f, &ev);
	unit_capture(0);
	/* SIGCONT wakes a stopped process at once: its state is no longer
	 * T when kill() returns (a wait for "continued" races its exit). */
	state = proc_state(c->child);
	cont = state != 'T' && state != '?';
	if (!cont)
		UNIT_TRUE(0, "follow_ctl: the stopped child continued");
	if (!unit_captured[0])
		return 0;
	snprintf(want, sizeof(want), "its new objects not searched: %s\n", pc_strerror(ENOMEM));
	if (strstr(unit_captured, want))
		return -ENOMEM;
	printf("# follow_ctl said: %s", unit_captured);
	return -EIO;
}

static void fc_after(void *ctx)
{
	struct fc_ctx *c = ctx;

	if (c->child > 0) {
		kill(c->child, SIGKILL);
		waitpid(c->child, NULL, 0);
	}
	fs_after(&c->fs);
}

static void test_follow_ctl(void)
{
	struct fc_ctx c = { 0 };
	struct sweep sw = { "follow_ctl", fc_prepare, fc_run, fc_after, &c, 2, 0 };
	struct session_opts so = { .so_filter_pids = 1, .so_ctl = fs_ctl, .so_ctl_ctx = &c.fs };

	if (probe_req_parse("usdt:*:prov:name", &c.fs.req) || fs_open(&c.fs)) {
		UNIT_TRUE(0, "follow_ctl: a '*' probe and its follow");
		return;
	}
	so.so_progs = follow_progs(c.fs.f);
	follow_close(c.fs.f);
	c.fs.f = NULL;
	if (session_open(&so, &c.fs.s)) {
		UNIT_TRUE(0, "follow_ctl: a session");
	} else {
		fc_prepare(&c);
		UNIT_EQ_INT(fc_run(&c), 0, "follow_ctl: a first, whole run");
		fc_after(&c);
		nomem_ours_only = 1;
		sweep(&sw);
		nomem_ours_only = 0;
		session_close(c.fs.s);
	}
	probe_req_free(&c.fs.req);
	site_set_free(&c.fs.ss);
}

/*
 * session_attach through perf (a link per site, kept in the session's
 * growing table): a failure to keep a link is -ENOMEM with that link
 * destroyed too, its perf event and uprobe gone, nothing allocated left.
 * The same through tracefs, whose entries are also recorded in the
 * stash: after each run none of this process's uprobe_events entries
 * (group probecheck_PID_...) is left.  A session per run, made before
 * the count.
 */
__attribute__((noinline, used)) void nomem_attach_target(void)
{
	__asm__ volatile("" ::: "memory");
}

struct sa_ctx {
	struct site_set ss;
	struct pc_session *s;
	const struct attach_ops *ops;
	int fds;                /* open before the session */
};

/* uprobe_events lines of this process's tracefs group. */
static int tracefs_ours(void)
{
	char group[64], line[512];
	FILE *f = fopen("/sys/kernel/tracing/uprobe_events", "re");
	int n = 0;

	if (!f)
		return 0;
	snprintf(group, sizeof(group), ":probecheck_%d_", (int)getpid());
	while (fgets(line, sizeof(line), f))
		n += strstr(line, group) != NULL;
	fclose(f);
	return n;
}

static void sa_prepare(void *ctx)
{
	struct sa_ctx *c = ctx;
	struct session_opts so = { .so_attach = c->ops };

	c->fds = unit_fds();
	if (session_open(&so, &c->s))
		c->s = NULL;
}

static int sa_run(void *ctx)
{
	struct sa_ctx *c = ctx;
	int rc;

	if (!c->s)
		return -EINVAL;
	unit_quiet(1);
	rc = session_attach(c->s, &c->ss, -1);
	unit_quiet(0);
	return rc;
}

static void sa_after(void *ctx)
{
	struct sa_ctx *c = ctx;

	session_close(c->s);
	c->s = NULL;
	/* A failed attach closes the perf event it made (the link does not
	 * own it yet). */
	if (unit_fds() != c->fds)
		UNIT_EQ_INT(unit_fds(), c->fds, "session_attach: after close, no descriptor more than before");
	if (c->ops == &attach_tracefs_ops && tracefs_ours())
		UNIT_EQ_INT(tracefs_ours(), 0, "session_attach (tracefs): no uprobe_events entry of ours left");
}

static void test_session_attach(const struct attach_ops *ops, const char *name)
{
	struct sa_ctx c = { { 0 }, NULL, ops, 0 };
	struct sweep sw = { name, sa_prepare, sa_run, sa_after, &c, 1, 0 };
	uint64_t off;

	if (procmaps_self_offset((const void *)nomem_attach_target, &off) ||
	    unit_site_add(&c.ss, "/proc/self/exe", off) || c.ss.ss_n != 1) {
		UNIT_TRUE(0, "session_attach: a site on a function of ours");
		site_set_free(&c.ss);
		return;
	}
	nomem_ours_only = 1;
	sweep(&sw);
	nomem_ours_only = 0;
	site_set_free(&c.ss);
}

static void test_install_check(void)
{
	struct site_set ss = { 0 };
	struct sweep here = { "install_check_here", NULL, ic_here_run, NULL, &ss, 1, 0 };
	struct sweep pid = { "install_check_pid", NULL, ic_pid_run, NULL, &ss, 2, 0 };

	/* Objects we map (an unmapped one would be probed in the kernel). */
	unit_site_add(&ss, "/proc/self/exe", 0x40);
	unit_site_add(&ss, "/proc/self/exe", 0x80);
	unit_site_add(&ss, "/proc/self/exe", 0xc0);
	if (ss.ss_n != 3) {
		UNIT_TRUE(0, "install check: a site set of three");
		site_set_free(&ss);
		return;
	}
	UNIT_TRUE(exe_mappings() >= 1, "install check: our executable's mappings counted");
	sweep(&here);
	sweep(&pid);
	site_set_free(&ss);
}
#endif

int main(void)
{
#ifdef NOMEM_SKIP
	UNIT_TRUE(1, "allocation failures # SKIP the sanitizer owns malloc");
#else
	if (allocator_is_ours()) {
		test_install_check();
		test_provider_resolve();
		test_stash_cleanup();
		test_follow_start();
		test_follow_ctl();
		test_session_attach(&attach_perf_ops, "session_attach (perf)");
		if (feature_has(FEATURE_TRACEFS, NULL, 0))
			test_session_attach(&attach_tracefs_ops, "session_attach (tracefs)");
		else
			UNIT_TRUE(1, "session_attach (tracefs) # SKIP no tracefs");
	}
	else
		UNIT_TRUE(1, "allocation failures # SKIP malloc is not ours (valgrind?)");
#endif
	return unit_done();
}
