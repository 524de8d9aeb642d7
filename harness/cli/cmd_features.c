/*
 * cmd_features.c — `probecheck features`: what this kernel can do for a
 * tracer, decided by probing, never by version.
 *
 * One key=value line per feature, 1 or 0; a 0 is followed by KEY_why=...
 * naming what failed.  harness/lib/caps.bash reads these lines, so a
 * test that needs a feature SKIPs with the reason.  Last, attach_auto=
 * says what `trace --attach=auto` picks for -p/-c (attach_auto_all= for
 * -a and --follow, where the pid filter does not matter).
 *
 *   uprobe_pmu        the uprobe PMU for fd-based uprobes (4.17)
 *   ref_ctr_offset    its ref_ctr_offset format field: semaphores (4.20)
 *   bpf_cookie        bpf_get_attach_cookie in kprobe/uprobe programs (5.15)
 *   uprobe_multi      a uprobe_multi link really made and hit (6.6)
 *   uprobe_multi_pid  its pid filter sees a second thread (fixed in 6.10)
 *   tracefs           uprobe_events open for writing
 *   uretprobe_syscall, uprobe_syscall, uprobe_optimize: features_x86.c
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <linux/bpf.h>
#include <bpf/libbpf.h>
#include "attach.h"
#include "attach_multi.h"
#include "cli.h"
#include "features.h"
#include "log.h"
#include "uprobe_pmu.h"

static void feature(const char *key, int ok, const char *why)
{
	printf("%s=%d\n", key, !!ok);
	if (!ok)
		printf("%s_why=%s\n", key, why);
}

static void probe_pmu(void)
{
	char why[160] = "";
	int lo, err;

	err = uprobe_pmu_type();
	feature("uprobe_pmu", err >= 0,
		"no uprobe PMU (/sys/bus/event_source/devices/uprobe/type "
		"missing: CONFIG_UPROBE_EVENTS, Linux 4.17+)");
	err = uprobe_pmu_bit("ref_ctr_offset", &lo);
	if (err)
		snprintf(why, sizeof(why), "uprobe PMU has no format field "
			 "ref_ctr_offset (%s; Linux 4.20+)", pc_strerror(-err));
	feature("ref_ctr_offset", !err, why);
}

static void probe_cookie(void)
{
	feature("bpf_cookie", attach_cookie_works(),
		"bpf_get_attach_cookie not allowed in kprobe programs "
		"(Linux 5.15+): a program calling it did not load");
}

static void probe_tracefs(void)
{
	static const char *const paths[] = {
		"/sys/kernel/tracing/uprobe_events",
		"/sys/kernel/debug/tracing/uprobe_events",
	};
	char why[200];
	int fd = -1, err = 0;

	for (size_t i = 0; i < 2 && fd < 0; i++) {
		fd = open(paths[i], O_WRONLY | O_CLOEXEC);
		if (fd < 0 && !i)
			err = errno;
	}
	snprintf(why, sizeof(why), "%s: %s (tracefs not mounted, or no "
		 "CONFIG_UPROBE_EVENTS)", paths[0], pc_strerror(err));
	feature("tracefs", fd >= 0, why);
	if (fd >= 0)
		close(fd);
}

int cmd_features(int argc, char **argv)
{
	struct umulti_caps c;
	int err;

	if (argc > 1) {
		if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
			usage(stdout);
			return EXIT_OK;
		}
		pc_err("features: unexpected argument '%s'", argv[1]);
		usage(stderr);
		return EXIT_USAGE;
	}
	probe_pmu();
	probe_cookie();
	{
		char why[200];
		int place = attach_site_id(why, sizeof(why)) != ATTACH_ID_COOKIE;

		/* 1: the tracer tells sites apart by place (attach.h). */
		printf("sites_by_place=%d\nsites_by_place_why=%s\n", place, why);
		/* 1: site programs run with preemption off (K5). */
		printf("preempt_guard=%d\n", attach_preempt_guard(why, sizeof(why)));
		printf("preempt_guard_why=%s\n", why);
	}
	err = umulti_probe(&c);
	if (err)
		snprintf(c.uc_link_why, sizeof(c.uc_link_why),
			 "the probe could not run: %s", pc_strerror(-err));
	feature("uprobe_multi", !err && c.uc_link, c.uc_link_why);
	feature("uprobe_multi_pid", !err && c.uc_pid,
		err ? c.uc_link_why : c.uc_pid_why);
	probe_tracefs();
	fflush(stdout);         /* before features_x86 forks */
	features_x86();
	printf("attach_auto=%s\n", attach_choose(NULL, 1)->ao_name);
	printf("attach_auto_all=%s\n", attach_choose(NULL, 0)->ao_name);
	return fflush(stdout) ? EXIT_RUNTIME : EXIT_OK;
}
