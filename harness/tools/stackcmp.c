/*
 * stackcmp — judge a tracer's user stacks by the fixture's own, frame by
 * frame (fixtures/fx_stack.c).
 *
 *   stackcmp [--short-ok] ORACLE TRACE
 *
 * The oracle (JSON lines) gives the exact address range of every chain
 * function of each process, {"step":"range","pid":P,"obj":PATH,"fn":F,
 * "lo":N,"hi":N},
 * and for every probe point reached, in order, the chain a stack taken
 * there must begin with: {"step":"stack","pid":P,"tid":T,"at":PROBE,
 * "chain":["fs_c","fs_b",...]}.  The trace is `probecheck trace --json
 * --ustack` output (or an adapter's, in its format): every event carries
 * "ustack":[{"addr":"0x..","sym":S|null,...},...].  The k-th event of
 * (pid, tid, probe) is judged by the k-th stack line of the same.
 *
 * Frame i is right when its address lies in chain[i]'s range, and its
 * symbol and object, when the tracer gives them, are chain[i] and the
 * object the range is in (the range line's "obj").  An event is
 *   exact   every chain frame right (frames past the chain are not known
 *           to the fixture: libc's, start_thread's; they are not judged)
 *   short   right as far as it goes, but fewer frames than the chain
 *           (allowed with --short-ok: an unwinder may stop, never invent;
 *           an empty stack is wrong: frame 0 needs no unwinding)
 *   wrong   a frame in another function's range, or in none, or named
 *           by a symbol that is not the function it is in
 * and a frame without a symbol is counted (unresolved) and listed.
 *
 * Exit: 0 no event wrong, none short (unless --short-ok), every frame
 * symbolized, every event with its oracle line; 1 otherwise (each
 * difference listed); 2 bad usage or malformed input.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "jsonl.h"

#define SC_SHOW_MAX 40

struct range {
	long     rg_pid;
	char    *rg_fn, *rg_obj;
	uint64_t rg_lo, rg_hi;
};

struct want {                   /* one oracle stack line */
	long     wt_pid, wt_tid;
	char    *wt_probe;
	json_t  *wt_chain;      /* array of strings, owned */
	int      wt_used;
};

static struct {
	struct range *v;
	size_t n;
} ranges;
static struct {
	struct want *v;
	size_t n;
} wants;
static struct {
	long events, exact, shorter, wrong, unresolved, unmatched, shown;
} tally;

static void say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void say(const char *fmt, ...)
{
	va_list ap;

	if (tally.shown++ >= SC_SHOW_MAX)
		return;
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
}

static int num(const json_t *obj, const char *key, int base, uint64_t *out)
{
	const json_t *v = jsonl_get(obj, key);
	const char *s = base == 16 ? jsonl_string(v, NULL) : jsonl_number(v);
	char *end;

	if (!s || !*s)
		return -1;
	errno = 0;
	*out = strtoull(s, &end, base == 16 ? 0 : 10);
	return *end || errno ? -1 : 0;
}

static const char *str(const json_t *obj, const char *key)
{
	return jsonl_string(jsonl_get(obj, key), NULL);
}

static int add_range(const json_t *o)
{
	uint64_t pid, lo, hi;
	const char *fn = str(o, "fn"), *obj = str(o, "obj");
	struct range *v;

	if (num(o, "pid", 10, &pid) || num(o, "lo", 10, &lo) ||
	    num(o, "hi", 10, &hi) || !fn || !obj || lo >= hi)
		return -EINVAL;
	v = realloc(ranges.v, (ranges.n + 1) * sizeof(*v));
	if (!v)
		return -ENOMEM;
	ranges.v = v;
	v[ranges.n] = (struct range){ (long)pid, strdup(fn), strdup(obj), lo, hi };
	ranges.n++;
	return v[ranges.n - 1].rg_fn && v[ranges.n - 1].rg_obj ? 0 : -ENOMEM;
}

static int add_want(const json_t *o)
{
	uint64_t pid, tid;
	const char *probe = str(o, "at");
	json_t *chain = jsonl_get(o, "chain");
	struct want *v;

	if (num(o, "pid", 10, &pid) || num(o, "tid", 10, &tid) || !probe ||
	    !json_is_array(chain) || !json_array_size(chain))
		return -EINVAL;
	v = realloc(wants.v, (wants.n + 1) * sizeof(*v));
	if (!v)
		return -ENOMEM;
	wants.v = v;
	v[wants.n] = (struct want){ (long)pid, (long)tid, strdup(probe),
				    json_incref(chain), 0 };
	return v[wants.n++].wt_probe ? 0 : -ENOMEM;
}

static const struct range *range_of(long pid, const char *fn)
{
	for (size_t i = 0; i < ranges.n; i++)
		if (ranges.v[i].rg_pid == pid && !strcmp(ranges.v[i].rg_fn, fn))
			return &ranges.v[i];
	return NULL;
}

/* Which chain function's code holds @addr, for the message. */
static const char *where(long pid, uint64_t addr)
{
	for (size_t i = 0; i < ranges.n; i++)
		if (ranges.v[i].rg_pid == pid && addr >= ranges.v[i].rg_lo &&
		    addr < ranges.v[i].rg_hi)
			return ranges.v[i].rg_fn;
	return NULL;
}

/* Where the last match of each (pid, tid, probe) was: the next one is
 * after it, so a long trace is read in one pass, not one per event. */
static struct cursor {
	long cu_pid, cu_tid;
	char    *cu_probe;
	size_t cu_next;
} *cursors;
static size_t ncursors;

static size_t *cursor_of(long pid, long tid, const char *probe)
{
	struct cursor *v;

	for (size_t i = 0; i < ncursors; i++)
		if (cursors[i].cu_pid == pid && cursors[i].cu_tid == tid &&
		    !strcmp(cursors[i].cu_probe, probe))
			return &cursors[i].cu_next;
	v = realloc(cursors, (ncursors + 1) * sizeof(*v));
	if (!v)
		return NULL;
	cursors = v;
	v[ncursors] = (struct cursor){ pid, tid, strdup(probe), 0 };
	if (!v[ncursors].cu_probe)
		return NULL;    /* no cursor: the slow scan from the start */
	return &v[ncursors++].cu_next;
}

static struct want *want_next(long pid, long tid, const char *probe)
{
	size_t *next = cursor_of(pid, tid, probe);

	for (size_t i = next ? *next : 0; i < wants.n; i++) {
		struct want *w = &wants.v[i];

		if (!w->wt_used && w->wt_pid == pid && w->wt_tid == tid &&
		    !strcmp(w->wt_probe, probe)) {
			if (next)
				*next = i + 1;
			return w->wt_used = 1, w;
		}
	}
	return NULL;
}

/* Frame @i of an event against chain[i]: 0 right, 1 wrong (said). */
static int judge_frame(const char *what, long pid, const json_t *fr, size_t i,
		       const char *fn)
{
	const struct range *rg = range_of(pid, fn);
	const char *sym = str(fr, "sym"), *obj = str(fr, "obj"), *in;
	uint64_t addr;

	if (num(fr, "addr", 16, &addr)) {
		say("%s: frame %zu: no address", what, i);
		return 1;
	}
	if (!rg) {
		say("%s: frame %zu: the oracle has no range for %s", what, i, fn);
		return 1;
	}
	if (addr < rg->rg_lo || addr >= rg->rg_hi) {
		in = where(pid, addr);
		say("%s: wrong frame %zu: 0x%" PRIx64 " (%s%s) is %s%s, wanted %s",
		    what, i, addr, sym ? "tracer: " : "tracer: no symbol",
		    sym ? sym : "", in ? "in " : "outside every chain function",
		    in ? in : "", fn);
		return 1;
	}
	if (sym && strcmp(sym, fn)) {
		say("%s: frame %zu: 0x%" PRIx64 " is in %s, the tracer says %s",
		    what, i, addr, fn, sym);
		return 1;
	}
	if (obj && strcmp(obj, rg->rg_obj)) {
		say("%s: frame %zu: 0x%" PRIx64 " is in %s of %s, the tracer says object %s",
		    what, i, addr, fn, rg->rg_obj, obj);
		return 1;
	}
	if (!sym) {
		tally.unresolved++;
		say("%s: frame %zu: 0x%" PRIx64 " (in %s) not symbolized", what, i,
		    addr, fn);
	}
	return 0;
}

static void judge_event(const json_t *ev, long lineno)
{
	uint64_t pid, tid;
	const char *probe = str(ev, "probe");
	const json_t *stk = jsonl_get(ev, "ustack");
	struct want *w;
	char what[160];
	size_t n, i;

	tally.events++;
	if (num(ev, "pid", 10, &pid) || num(ev, "tid", 10, &tid) || !probe) {
		tally.wrong++;
		say("trace line %ld: an event without probe, pid and tid", lineno);
		return;
	}
	snprintf(what, sizeof(what), "%s (pid %" PRIu64 " tid %" PRIu64 ", trace line %ld)",
		 probe, pid, tid, lineno);
	w = want_next((long)pid, (long)tid, probe);
	if (!w) {
		tally.unmatched++;
		say("%s: no stack left in the oracle for it", what);
		return;
	}
	if (!json_is_array(stk)) {
		tally.wrong++;
		say("%s: no \"ustack\" list%s%s", what,
		    str(ev, "ustack_error") ? ": " : "",
		    str(ev, "ustack_error") ? str(ev, "ustack_error") : "");
		return;
	}
	n = json_array_size(w->wt_chain);
	for (i = 0; i < n && i < json_array_size(stk); i++) {
		const char *fn = jsonl_string(json_array_get(w->wt_chain, i), NULL);

		if (!fn || judge_frame(what, (long)pid, json_array_get(stk, i), i, fn)) {
			tally.wrong++;
			return;
		}
	}
	if (i == 0) {
		/* Frame 0 is the probed instruction (or the return address):
		 * the kernel has it without unwinding anything. */
		tally.wrong++;
		say("%s: an empty stack", what);
		return;
	}
	if (i < n) {
		tally.shorter++;
		say("%s: short: %zu of the chain's %zu frames", what, i, n);
		return;
	}
	tally.exact++;
}

/* Each line through @take; 0, or 2 after a message naming the line. */
static int read_lines(const char *path, int is_trace)
{
	FILE *f = fopen(path, "re");
	char *text = NULL;
	size_t cap = 0;
	long lineno = 0;
	int rc = 0;

	if (!f) {
		fprintf(stderr, "stackcmp: '%s': %s\n", path, strerror(errno));
		return 2;
	}
	while (!rc && getline(&text, &cap, f) >= 0) {
		struct jsonl_err e = { 0 };
		json_t *o;
		const char *step;
		int err = 0;

		lineno++;
		if (!text[strspn(text, " \t\r\n")])
			continue;
		o = jsonl_parse(text, &e);
		if (!o) {
			fprintf(stderr, "stackcmp: '%s' line %ld column %ld: malformed: %s\n",
				path, lineno, e.je_col, e.je_text);
			rc = 2;
			break;
		}
		step = str(o, "step");
		if (is_trace)
			judge_event(o, lineno);
		else if (step && !strcmp(step, "range"))
			err = add_range(o);
		else if (step && !strcmp(step, "stack"))
			err = add_want(o);
		json_decref(o);
		if (err) {
			fprintf(stderr, "stackcmp: '%s' line %ld: %s\n", path, lineno,
				err == -ENOMEM ? "out of memory" :
				"a range or stack line without its fields");
			rc = 2;
		}
	}
	free(text);
	fclose(f);
	return rc;
}

int main(int argc, char **argv)
{
	int short_ok = 0, i = 1, rc;

	if (i < argc && !strcmp(argv[i], "--short-ok"))
		short_ok = 1, i++;
	if (argc - i != 2) {
		fprintf(stderr, "usage: stackcmp [--short-ok] ORACLE TRACE\n");
		return 2;
	}
	rc = read_lines(argv[i], 0);
	if (!rc)
		rc = read_lines(argv[i + 1], 1);
	if (rc)
		return rc;
	printf("stackcmp: %ld events: %ld exact, %ld short, %ld wrong, %ld without "
	       "an oracle stack; %ld frames not symbolized\n", tally.events,
	       tally.exact, tally.shorter, tally.wrong, tally.unmatched,
	       tally.unresolved);
	return tally.wrong || tally.unmatched || tally.unresolved ||
	       (tally.shorter && !short_ok) || !tally.events;
}
