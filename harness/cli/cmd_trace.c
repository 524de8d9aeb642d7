/*
 * cmd_trace.c — `probecheck trace`: options and probe resolution.
 */
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include "attach.h"
#include "cli.h"
#include "log.h"
#include "procmaps.h"
#include "provider.h"
#include "session.h"
#include "trace.h"

static int parse_str_list(const char *s, uint32_t *mask)
{
	char *copy = strdup(s), *tok, *save = NULL, *end;
	int err = 0;

	if (!copy)
		return -ENOMEM;
	/* strsep, not strtok: "" and "1,,2" have empty indexes. */
	for (save = copy; (tok = strsep(&save, ",")) != NULL;) {
		long v = strtol(tok, &end, 10);

		if (!*tok || *end || v < 0 || v >= PC_MAX_ARGS) {
			pc_err("--str '%s': '%s' is not an argument index 0..%d",
			       s, tok, PC_MAX_ARGS - 1);
			err = -EINVAL;
			break;
		}
		*mask |= 1u << v;
	}
	free(copy);
	return err;
}

/* --buf N,LEN: argument N points to LEN (1..PC_STR_LEN) bytes. */
static int parse_buf(const char *s, struct trace_opts *o)
{
	char *end, *l;
	long n = strtol(s, &end, 10), len;

	if (end == s || *end != ',' || n < 0 || n >= PC_MAX_ARGS) {
		pc_err("--buf '%s': not N,LEN with N an argument index 0..%d",
		       s, PC_MAX_ARGS - 1);
		return -EINVAL;
	}
	l = end + 1;
	len = strtol(l, &end, 10);
	if (end == l || *end || len < 1 || len > PC_STR_LEN) {
		pc_err("--buf '%s': LEN not a number of bytes 1..%d", s,
		       PC_STR_LEN);
		return -EINVAL;
	}
	o->to_buf_mask |= 1u << n;
	o->to_buf_len[n] = (uint16_t)len;
	return 0;
}

/* --args N: how many arguments pid entry probes fetch. */
static int parse_nargs(const char *s, int *n)
{
	char *end;
	long v = strtol(s, &end, 10);

	if (!*s || *end || v < 0 || v > PC_MAX_ARGS) {
		pc_err("--args '%s': not a number of arguments 0..%d", s,
		       PC_MAX_ARGS);
		return -EINVAL;
	}
	*n = (int)v;
	return 0;
}

/* --ustack[=N]: frames per event, 1..PC_MAX_STACK; alone, all of them. */
static int parse_ustack(const char *s, unsigned *n)
{
	char *end;
	long v;

	if (!s) {
		*n = PC_MAX_STACK;
		return 0;
	}
	v = strtol(s, &end, 10);
	if (!*s || *end || v < 1 || v > PC_MAX_STACK) {
		pc_err("--ustack '%s': not a number of frames 1..%d", s,
		       PC_MAX_STACK);
		return -EINVAL;
	}
	*n = (unsigned)v;
	return 0;
}

/* --attach MODE|auto: how sites become uprobes (attach.h); auto: NULL. */
static int parse_attach(const char *s, const struct attach_ops **mode)
{
	char names[128];

	*mode = attach_mode_find(s);
	if (*mode || !strcmp(s, "auto"))
		return 0;
	attach_mode_names(names, sizeof(names), ", ");
	pc_err("--attach '%s': expected %s or auto", s, names);
	return -EINVAL;
}

int trace_parse_opts(int argc, char **argv, struct trace_opts *o)
{
	static const struct option opts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "str", required_argument, NULL, 's' },
		{ "ready", required_argument, NULL, 'r' },
		{ "args", required_argument, NULL, 'n' },   /* -a is --all */
		{ "all", no_argument, NULL, 'a' },
		{ "follow", no_argument, NULL, 'f' },
		{ "attach", required_argument, NULL, 'A' },
		{ "ustack", optional_argument, NULL, 'S' },
		{ "buf", required_argument, NULL, 'B' },
		{ "sleepable", no_argument, NULL, 'L' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 }
	};
	int c, at;

	/* 0, not 1: all of getopt's state.  A parse that stopped inside a
	 * cluster ("-Zp1") would resume there, in an argv that is gone. */
	optind = 0;
	opterr = 0;     /* our own messages, with the probecheck: prefix */
	o->to_nargs = 6;
	o->to_attach = NULL;    /* auto */
	while ((at = GETOPT_AT(), c = getopt_long(argc, argv, "+:jc:p:afvh", opts, NULL)) != -1) {
		switch (c) {
		case 'j': o->to_json = 1; break;
		case 's':
			if (parse_str_list(optarg, &o->to_str_mask))
				return -EINVAL;
			break;
		case 'r': o->to_ready = optarg; break;
		case 'a': o->to_all = 1; break;
		case 'f': o->to_follow = 1; break;
		case 'n':
			if (parse_nargs(optarg, &o->to_nargs))
				return -EINVAL;
			break;
		case 'A':
			if (parse_attach(optarg, &o->to_attach))
				return -EINVAL;
			break;
		case 'S':
			if (parse_ustack(optarg, &o->to_ustack))
				return -EINVAL;
			break;
		case 'B':
			if (parse_buf(optarg, o))
				return -EINVAL;
			break;
		case 'L': o->to_sleepable = 1; break;
		case 'c': o->to_cmd = optarg; break;
		case 'p':
			if (parse_pid(optarg, &o->to_pid))
				return -EINVAL;
			break;
		case 'v': pc_log_verbose = 1; break;
		case 'h': usage(stdout); return 1;
		default:
			bad_option("trace", c, argv, at);
			return -EINVAL;
		}
	}
	if (o->to_str_mask & o->to_buf_mask) {
		pc_err("trace: an argument is either --str or --buf, not both "
		       "(argument %d)", __builtin_ctz(o->to_str_mask & o->to_buf_mask));
		return -EINVAL;
	}
	if (!!o->to_cmd + !!o->to_pid + o->to_all > 1) {
		pc_err("trace: give at most one of -c CMD, -p PID or -a");
		return -EINVAL;
	}
	if (o->to_follow && !o->to_cmd && !o->to_pid) {
		pc_err("trace: --follow needs -c CMD or -p PID");
		return -EINVAL;
	}
	/* Neither -c nor -p: every process mapping the object, as with -a. */
	if (!o->to_cmd && !o->to_pid)
		o->to_all = 1;
	if (o->to_cmd && !*o->to_cmd) {
		pc_err("trace: -c: empty command");
		return -EINVAL;
	}
	if (optind == argc) {
		pc_err("trace: no PROBE given");
		return -EINVAL;
	}
	o->to_probes = argv + optind;
	o->to_nprobes = argc - optind;
	return 0;
}

/* Unreadable operands are reported once per site, not per event. */
static void warn_bad_operands(const struct site_set *ss)
{
	for (size_t i = 0; i < ss->ss_n; i++) {
		const struct site *st = &ss->ss_v[i];

		if (st->st_bad_mask)
			pc_err("usdt: '%s' %s:%s at 0x%llx: %s (traced as null)",
			       st->st_path, st->st_provider, st->st_name,
			       (unsigned long long)st->st_pc, st->st_bad_why);
	}
}

/* PROBE @i, parsed once, with the options that apply to each probe. */
static int probe_parse(const struct trace_opts *o, int i,
		       struct probe_req *req)
{
	int err = probe_req_parse(o->to_probes[i], req);

	if (err)
		return err;
	req->pr_nargs = o->to_nargs;
	req->pr_str_mask = o->to_str_mask;
	req->pr_buf_mask = o->to_buf_mask;
	memcpy(req->pr_buf_len, o->to_buf_len, sizeof(req->pr_buf_len));
	return 0;
}

/* The sites of one parsed PROBE into @ss: 0 or -errno after a message. */
static int probe_resolve(const struct trace_opts *o,
			 const struct probe_req *req, const struct target *tg,
			 struct site_set *ss)
{
	/* --follow: '*' is searched again in every image and library the
	 * processes map later (follow.c); with -c there is no process to
	 * search yet. */
	int later = o->to_follow && !strcmp(req->pr_path, "*");
	int n = later && !o->to_pid ? 0 :
		provider_find(req->pr_kind)->pv_resolve(req, tg, ss);

	if (n == 0 && !later) {
		pc_err("probe '%s': no probe matches", req->pr_text);
		n = -ENOENT;
	}
	return n < 0 ? n : 0;
}

/* Each PROBE parsed then resolved in turn: the first error, syntax or
 * resolution, is the one reported, as the user typed them. */
int trace_resolve(const struct trace_opts *o, struct probe_req *reqs,
		  struct site_set *ss)
{
	struct pm_objects maps = { 0 };
	struct target tg = { .tg_pid = o->to_pid };
	int err = 0;

	if (o->to_pid) {
		err = procmaps_read(o->to_pid, 0, &maps);
		if (err)
			return err;
		tg.tg_maps = &maps;
	}
	for (int i = 0; i < o->to_nprobes && !err; i++)
		err = probe_parse(o, i, &reqs[i]) ?:
		      probe_resolve(o, &reqs[i], &tg, ss);
	procmaps_free(&maps);
	if (err)
		return err;
	site_set_sort(ss);
	site_set_drop_same(ss, 1);
	warn_bad_operands(ss);
	return 0;
}

/* The perf and tracefs modes hold a perf event (and a link) per site:
 * a system's default soft limit of 1024 descriptors would stop them at a
 * few hundred sites.  Raised to the hard limit, as bpftrace and bcc do. */
static void raise_nofile(void)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) || rl.rlim_cur >= rl.rlim_max)
		return;
	rl.rlim_cur = rl.rlim_max;
	if (setrlimit(RLIMIT_NOFILE, &rl))
		pc_dbg("trace: RLIMIT_NOFILE stays as it is: %s", strerror(errno));
}

int cmd_trace(int argc, char **argv)
{
	struct trace_opts o = { 0 };
	struct site_set ss = { 0 };
	struct probe_req *reqs;
	int err, rc;

	err = trace_parse_opts(argc, argv, &o);
	if (err > 0)
		return EXIT_OK;         /* --help */
	if (err) {
		usage(stderr);
		return EXIT_USAGE;
	}
	raise_nofile();
	/* Parsed by trace_resolve, read by follow.c until the run ends. */
	reqs = calloc(o.to_nprobes, sizeof(*reqs));
	if (!reqs)
		return EXIT_RUNTIME;
	err = trace_resolve(&o, reqs, &ss);
	if (err)
		rc = err == -ENOMEM ? EXIT_RUNTIME : EXIT_USAGE;
	else
		rc = trace_run(&o, reqs, &ss);
	site_set_free(&ss);
	probe_reqs_free(reqs, o.to_nprobes);
	return rc;
}
