/*
 * fuzz_cli.c — `probecheck trace`'s options and PROBE arguments.
 *
 * Input: the arguments after "trace", NUL-separated (at most 64).  They
 * go through trace_parse_opts (harness/cli/cmd_trace.c: getopt_long and the
 * --str, --args, --attach, -p parsers), then every PROBE through
 * probe_req_parse (providers/providers.c: KIND:PATH:A:B) and, for pid
 * probes, the WHERE field through pid_parse_where (entry, return,
 * 0xOFFSET).  pid_parse_where is static in prov_pid.c, and a provider
 * exports nothing but its ops table (providers/provider.h: each prov_*.c
 * holds static helpers and ends with its table), so this file includes
 * prov_pid.c, its table renamed; resolving the probe instead would open
 * the files the input names.  Nothing is opened, attached or run: -p's
 * check of the pid is kill(PID, 0).
 *
 * Checked: the same argv parsed twice gives the same result (getopt keeps
 * state between calls); an accepted command line has exactly one of -c,
 * -p, -a, at least one PROBE, --args within 0..PC_MAX_ARGS and --str
 * indexes below PC_MAX_ARGS; an accepted PROBE has four non-empty fields,
 * none with ':'.
 */
#include "fuzz.h"
#include <errno.h>
#include <getopt.h>
#include "log.h"
#include "trace.h"

#define pid_provider fuzz_cli_pid_provider
#include "../../providers/prov_pid.c"
#undef pid_provider

#define FUZZ_CLI_MAXARGS 64

static void check_probe(const char *text, int nargs)
{
	struct probe_req req;
	struct pid_where w;
	int err;

	err = probe_req_parse(text, &req);
	fuzz_check(err == 0 || err == -EINVAL);
	if (err)
		return;
	fuzz_check(req.pr_text == text && req.pr_nargs == 0);
	fuzz_check(*req.pr_kind && *req.pr_path && *req.pr_a && *req.pr_b);
	fuzz_check(!strchr(req.pr_kind, ':') && !strchr(req.pr_path, ':') &&
		   !strchr(req.pr_a, ':') && !strchr(req.pr_b, ':'));
	fuzz_check(provider_find(req.pr_kind) != NULL);
	if (!strcmp(req.pr_kind, "pid")) {
		req.pr_nargs = nargs;
		if (!pid_parse_where(&req, &w)) {
			fuzz_check(memchr(w.pw_name, '\0', sizeof(w.pw_name)));
			fuzz_check(w.pw_kind != PID_ENTRY ||
				   (w.pw_nargs >= 0 && w.pw_nargs <= PC_MAX_ARGS));
		}
	}
	probe_req_free(&req);
}

/* One parse of the input; what it gave, as offsets into its buffer. */
struct cli_parse {
	char *cp_buf, *cp_argv[FUZZ_CLI_MAXARGS + 2];
	int cp_argc, cp_err;
	struct trace_opts cp_o;
	long cp_cmd, cp_ready, cp_probes;
};

static void cli_parse(const uint8_t *data, size_t size, struct cli_parse *p)
{
	struct trace_opts *o = &p->cp_o;

	memset(p, 0, sizeof(*p));
	p->cp_buf = fuzz_str(data, size);
	p->cp_argv[p->cp_argc++] = "trace";
	for (size_t off = 0; off < size && p->cp_argc <= FUZZ_CLI_MAXARGS;) {
		p->cp_argv[p->cp_argc++] = p->cp_buf + off;
		off += strlen(p->cp_buf + off) + 1;
	}
	p->cp_argv[p->cp_argc] = NULL;
	p->cp_err = trace_parse_opts(p->cp_argc, p->cp_argv, o);
	pc_log_verbose = 0;     /* -v: a process-wide switch */
	p->cp_cmd = o->to_cmd ? o->to_cmd - p->cp_buf : -1;
	p->cp_ready = o->to_ready ? o->to_ready - p->cp_buf : -1;
	p->cp_probes = o->to_probes ? o->to_probes - p->cp_argv : -1;
}

/* A clean getopt for the first parse, whatever the last input left. */
static void getopt_reset(void)
{
	static char *argv[] = { "reset", NULL };

	optind = 0;
	getopt(1, argv, "");
}

/*
 * The input is parsed twice, the first buffer freed in between: a parse
 * must depend on its argv alone (getopt keeps state between calls).  -p
 * PID depends on the process too: when the two disagree, a third parse
 * must agree with the second (the process exited in between), else the
 * second was not a function of its argv.
 */
PC_FUZZ_TARGET(cli)
{
	struct cli_parse a, b, c;
	const struct trace_opts *o = &b.cp_o;

	getopt_reset();
	cli_parse(data, size, &a);
	free(a.cp_buf);
	cli_parse(data, size, &b);
	if (a.cp_err != b.cp_err) {
		cli_parse(data, size, &c);
		free(c.cp_buf);
		fuzz_check(c.cp_err == b.cp_err && (a.cp_o.to_pid || o->to_pid));
		a = c;
	}
	fuzz_check(b.cp_err == 0 || b.cp_err == 1 || b.cp_err == -EINVAL);
	if (b.cp_err) {
		free(b.cp_buf);
		return 0;
	}
	fuzz_check(a.cp_cmd == b.cp_cmd && a.cp_ready == b.cp_ready &&
		   a.cp_probes == b.cp_probes);
	fuzz_check(a.cp_o.to_json == o->to_json && a.cp_o.to_pid == o->to_pid &&
		   a.cp_o.to_all == o->to_all && a.cp_o.to_follow == o->to_follow &&
		   a.cp_o.to_nargs == o->to_nargs &&
		   a.cp_o.to_str_mask == o->to_str_mask &&
		   a.cp_o.to_attach == o->to_attach &&
		   a.cp_o.to_nprobes == o->to_nprobes);
	fuzz_check(!!o->to_cmd + !!o->to_pid + !!o->to_all == 1);
	fuzz_check(!o->to_cmd || *o->to_cmd);
	fuzz_check(o->to_nprobes >= 1 &&
		   o->to_probes + o->to_nprobes == b.cp_argv + b.cp_argc);
	fuzz_check(o->to_nargs >= 0 && o->to_nargs <= PC_MAX_ARGS);
	fuzz_check(!(o->to_str_mask >> PC_MAX_ARGS));
	for (int i = 0; i < o->to_nprobes; i++)
		check_probe(o->to_probes[i], o->to_nargs);
	free(b.cp_buf);
	return 0;
}
