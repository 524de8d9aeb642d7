/*
 * trace_out.c — one line per event, text or JSON.
 *
 * Integers are printed by the operand's declared sign: signed operands as
 * int64 (negative when they are), unsigned ones as uint64, so 8@$-1 prints
 * 18446744073709551615 and -8@... prints -1.  An argument the tracer
 * could not read says so in its own position (print_arg): never a value.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include "cli.h"
#include "log.h"
#include "trace.h"
#include "ustack.h"

/* A buffer as lowercase hex, two digits a byte: JSON string or bare. */
static void print_hex(FILE *f, const char *b, unsigned len, int json)
{
	if (json)
		fputc('"', f);
	for (unsigned i = 0; i < len && i < PC_STR_LEN; i++)
		fprintf(f, "%02x", (unsigned char)b[i]);
	if (json)
		fputc('"', f);
}

/*
 * Argument @i of @ev.  Not read: with the read's errno, JSON
 * {"unreadable":"EFAULT"}, text <unreadable:EFAULT> (counted); with none
 * (an operand the tracer cannot decode, a NULL string) null or '?'.  A
 * string cut at PC_STR_LEN - 1 bytes: {"truncated":"..."} or
 * <truncated:"...">, never bytes that read as the whole string.
 */
static void print_arg(FILE *f, struct trace_out *t, const struct pc_event *ev,
		      const struct site *st, const char (*strs)[PC_STR_LEN],
		      int i)
{
	const struct pc_arg *a = &st->st_spec.ps_args[i];
	uint32_t bit = 1u << i;
	int json = t->tr_json;

	if (ev->pe_err_mask & bit) {
		const char *name;
		char nb[16];

		if (!ev->pe_errno[i]) {
			fputs(json ? "null" : "?", f);
			return;
		}
		name = strerrorname_np(ev->pe_errno[i]);
		if (!name) {
			snprintf(nb, sizeof(nb), "E%u", ev->pe_errno[i]);
			name = nb;
		}
		t->tr_unreadable++;
		fprintf(f, json ? "{\"unreadable\":\"%s\"}" : "<unreadable:%s>",
			name);
		return;
	}
	if (strs && (st->st_spec.ps_buf_mask & bit)) {
		print_hex(f, strs[i], a->pa_buf_len, json);
		return;
	}
	if (strs && (st->st_spec.ps_str_mask & bit)) {
		char buf[PC_STR_LEN];
		int cut = !!(ev->pe_trunc_mask & bit);

		snprintf(buf, sizeof(buf), "%s", strs[i]);
		if (cut) {
			t->tr_truncated++;
			fputs(json ? "{\"truncated\":" : "<truncated:", f);
		}
		json_str(f, buf);
		if (cut)
			fputc(json ? '}' : '>', f);
		return;
	}
	if (a->pa_signed)
		fprintf(f, "%" PRId64, (int64_t)ev->pe_args[i]);
	else
		fprintf(f, "%" PRIu64, (uint64_t)ev->pe_args[i]);
}

static void json_str_or_null(FILE *f, const char *s)
{
	if (s)
		json_str(f, s);
	else
		fputs("null", f);
}

/* One frame: JSON {"addr":"0x..","obj":..,"sym":..,"off":N,"build_id":..}
 * (null where not resolved, off only with sym), or text ADDR[:SYM+OFF].
 * A frame the symbolizer could not read for (@err: out of memory, not a
 * process gone) says why ("error"; text: ADDR:?ERRNO), so that its nulls
 * do not read as "nothing holds this address". */
static void print_frame(FILE *f, const struct ustack_frame *uf, int json, int err)
{
	if (!json) {
		fprintf(f, " 0x%" PRIx64, uf->uf_addr);
		if (uf->uf_sym)
			fprintf(f, ":%s+0x%" PRIx64, uf->uf_sym, uf->uf_off);
		else if (err)
			fprintf(f, ":?%s", strerrorname_np(-err) ?: "error");
		return;
	}
	fprintf(f, "{\"addr\":\"0x%" PRIx64 "\",\"obj\":", uf->uf_addr);
	json_str_or_null(f, uf->uf_obj);
	fputs(",\"sym\":", f);
	json_str_or_null(f, uf->uf_sym);
	if (uf->uf_sym)
		fprintf(f, ",\"off\":%" PRIu64, uf->uf_off);
	fputs(",\"build_id\":", f);
	json_str_or_null(f, uf->uf_build_id);
	if (err)
		fprintf(f, ",\"error\":\"%s\"", pc_strerror(-err));
	fputc('}', f);
}

/*
 * The frames as the kernel gave them, each resolved in the process's
 * objects.  A stack the kernel could not take (bpf_get_stack < 0) is an
 * empty list and its error: never frames made up.
 */
static void print_stack(FILE *f, const struct trace_out *t,
			const struct pc_event *ev, const struct pc_ustack *stk)
{
	int n = stk->pu_n < PC_MAX_STACK ? stk->pu_n : PC_MAX_STACK;

	fputs(t->tr_json ? ",\"ustack\":[" : " |", f);
	for (int i = 0; i < n; i++) {
		struct ustack_frame uf = { .uf_addr = stk->pu_ip[i] };
		int err;

		/* -ESRCH: gone before its first event was read (its frames
		 * null: nothing maps them now).  Another error: the frame
		 * goes out unresolved, with it, rather than not at all. */
		err = ustack_resolve(t->tr_syms, ev->pe_pid, stk->pu_ip[i], &uf);
		if (t->tr_json && i)
			fputc(',', f);
		print_frame(f, &uf, t->tr_json, err == -ESRCH ? 0 : err);
	}
	if (t->tr_json)
		fputc(']', f);
	if (stk->pu_n < 0)
		fprintf(f, t->tr_json ? ",\"ustack_error\":\"%s\"" : " (%s)",
			pc_strerror(-stk->pu_n));
}

void trace_print_event(void *ctx, const struct pc_event *ev,
		       const char (*strs)[PC_STR_LEN],
		       const struct pc_ustack *stk)
{
	struct trace_out *t = ctx;
	const struct site *st;
	FILE *f = stdout;

	if (ev->pe_spec_id >= t->tr_sites->ss_n)
		return;
	st = &t->tr_sites->ss_v[ev->pe_spec_id];
	if (t->tr_json) {
		fprintf(f, "{\"probe\":\"%s:%s\",\"pid\":%u,\"tid\":%u,"
			"\"nspid\":%u,\"nstid\":%u,\"cpu\":%u,\"ts\":%llu,"
			"\"args\":[", st->st_provider, st->st_name, ev->pe_pid,
			ev->pe_tid, ev->pe_nspid, ev->pe_nstid, ev->pe_cpu,
			(unsigned long long)ev->pe_ts);
	} else {
		fprintf(f, "%llu %u %u %u %s:%s", (unsigned long long)ev->pe_ts,
			ev->pe_cpu, ev->pe_pid, ev->pe_tid, st->st_provider,
			st->st_name);
	}
	for (unsigned i = 0; i < ev->pe_nargs && i < PC_MAX_ARGS; i++) {
		fputs(t->tr_json ? (i ? "," : "") : " ", f);
		print_arg(f, t, ev, st, strs, i);
	}
	if (t->tr_json)
		fputc(']', f);
	if (stk && t->tr_syms)
		print_stack(f, t, ev, stk);
	fputs(t->tr_json ? "}\n" : "\n", f);
}
