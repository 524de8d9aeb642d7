/*
 * trace_out.c — one line per event, text or JSON.
 *
 * Integers are printed by the operand's declared sign: signed operands as
 * int64 (negative when they are), unsigned ones as uint64, so 8@$-1 prints
 * 18446744073709551615 and -8@... prints -1.  An operand the tracer could
 * not read prints as null (JSON) or '?' (text), in its own position.
 */
#include <inttypes.h>
#include <stdio.h>
#include "cli.h"
#include "trace.h"

static void print_arg(FILE *f, const struct pc_event *ev, const struct site *st,
		      const char (*strs)[PC_STR_LEN], int i, int json)
{
	const struct pc_arg *a = &st->st_spec.ps_args[i];

	if (ev->pe_err_mask & (1u << i)) {
		fputs(json ? "null" : "?", f);
		return;
	}
	if (strs && (st->st_spec.ps_str_mask & (1u << i))) {
		char buf[PC_STR_LEN];

		snprintf(buf, sizeof(buf), "%s", strs[i]);
		json_str(f, buf);
		return;
	}
	if (a->pa_signed)
		fprintf(f, "%" PRId64, (int64_t)ev->pe_args[i]);
	else
		fprintf(f, "%" PRIu64, (uint64_t)ev->pe_args[i]);
}

void trace_print_event(void *ctx, const struct pc_event *ev,
		       const char (*strs)[PC_STR_LEN])
{
	const struct trace_out *t = ctx;
	const struct site *st;
	FILE *f = stdout;

	if (ev->pe_spec_id >= t->tr_sites->ss_n)
		return;
	st = &t->tr_sites->ss_v[ev->pe_spec_id];
	if (t->tr_json) {
		fprintf(f, "{\"probe\":\"%s:%s\",\"pid\":%u,\"tid\":%u,"
			"\"cpu\":%u,\"ts\":%llu,\"args\":[", st->st_provider,
			st->st_name, ev->pe_pid, ev->pe_tid, ev->pe_cpu,
			(unsigned long long)ev->pe_ts);
	} else {
		fprintf(f, "%llu %u %u %u %s:%s", (unsigned long long)ev->pe_ts,
			ev->pe_cpu, ev->pe_pid, ev->pe_tid, st->st_provider,
			st->st_name);
	}
	for (unsigned i = 0; i < ev->pe_nargs && i < PC_MAX_ARGS; i++) {
		fputs(t->tr_json ? (i ? "," : "") : " ", f);
		print_arg(f, ev, st, strs, i, t->tr_json);
	}
	fputs(t->tr_json ? "]}\n" : "\n", f);
}
