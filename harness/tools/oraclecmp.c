/*
 * oraclecmp — judge a tracer by a fixture's oracle log, exactly.
 *
 *   oraclecmp [--only GLOB]... [--mask PROBE:N]... [--ns] ORACLE TRACE
 *
 * Both files are JSON lines.  The oracle holds one object per fired probe,
 *   {"probe":"fx:p_int","pid":123,"tid":124,"args":[1,-2,18446744073709551615,"s"]}
 * plus informational lines without "probe" ("sema", "step", "note"), which
 * are ignored, and corruption records (fixtures/fx_integ.c):
 *   {"corrupt":"fxint:nop5","pid":..,"tid":..,"hit":1,"what":"redzone",...}
 * A corruption record means the traced program's state after a probe site
 * differed from before it: the comparison fails whatever the events say,
 * and every record is printed as "traced program corrupted: LINE".  --only
 * never hides one.  The trace is `probecheck trace --json` output: every line is
 * an event and must carry probe, pid, tid and args (cpu, ts are ignored).
 *
 * The two sides are compared as multisets of (pid, tid, probe, args): order
 * does not matter, counts do.  There is no tolerance: an argument is equal
 * only if it is the same integer or the same string.  That is why no JSON
 * number goes through a double here (jq 1.6 does: 18446744073709551615
 * would equal 18446744073709551614): the lines are read by jsonl.c, which
 * keeps integers as canonical decimal text, range-checked against 64 bits,
 * never converted; strings are decoded and re-encoded so that "\u0041"
 * equals "A".  A line is flat (no object inside it) but for a trace's
 * "ustack" list of frames, which is left to stackcmp, and an argument
 * that is a marker instead of data: an object of one scalar member,
 * {"unreadable":"EFAULT"} or {"truncated":"..."} (docs/cli.md), compared
 * as such, so a marker equals only the same marker.
 *
 * --ns takes the trace's "nspid" and "nstid" (each hit's ids in its own
 * pid namespace) as its pid and tid: a fixture in a container logs the
 * ids it sees, getpid() and gettid() there.  A trace line without them
 * is malformed then.
 *
 * --mask PROBE:N compares argument N (1-based) of PROBE's events as "*"
 * on both sides: for a test that has shown, by other means, why that
 * argument cannot be read at some hits (an operand the kernel overwrote),
 * and wants every other value still exact.
 *
 * Exit: 0 the multisets are equal and the oracle has no corruption record,
 * 1 they differ or the program was corrupted (each missing and
 * unexpected event is listed with its count), 2 bad usage or malformed input
 * (the message names the file and line).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fnmatch.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "jsonl.h"

/* How many distinct differing events to print per kind before eliding. */
#define OC_SHOW_MAX 50

/* A growable byte buffer; every canonical value is built in one. */
struct buf {
	char   *b_p;
	size_t  b_len, b_cap;
};

/* One event as the canonical key "probe\tpid\ttid\t[args]". */
struct evset {
	char  **es_v;
	size_t  es_n, es_cap;
};

struct only {
	const char **on_glob;
	int          on_n;
	const char **on_mask;           /* "PROBE:N" */
	int          on_nmask;
};

static int buf_put(struct buf *b, const char *s, size_t n)
{
	if (b->b_len + n + 1 > b->b_cap) {
		size_t cap = b->b_cap ? b->b_cap * 2 : 64;
		char *p;

		while (cap < b->b_len + n + 1)
			cap *= 2;
		p = realloc(b->b_p, cap);
		if (!p)
			return -ENOMEM;
		b->b_p = p;
		b->b_cap = cap;
	}
	memcpy(b->b_p + b->b_len, s, n);
	b->b_len += n;
	b->b_p[b->b_len] = '\0';
	return 0;
}

static int buf_puts(struct buf *b, const char *s)
{
	return buf_put(b, s, strlen(s));
}

static int fail(struct jsonl_err *e, long col, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* A line refused for what it holds, not how it is spelled: @col is the
 * column of the key at fault (1 if unknown). */
static int fail(struct jsonl_err *e, long col, const char *fmt, ...)
{
	va_list ap;

	e->je_col = col;
	va_start(ap, fmt);
	vsnprintf(e->je_text, sizeof(e->je_text), fmt, ap);
	va_end(ap);
	return -EINVAL;
}

/* Append raw bytes as a JSON string in one canonical spelling. */
static int put_json_string(struct buf *b, const char *s, size_t n)
{
	static const char ctl[] = "\n\t\r\b\f";
	const char *e;
	char esc[8];
	size_t i;
	int err = buf_puts(b, "\"");

	for (i = 0; !err && i < n; i++) {
		unsigned char ch = (unsigned char)s[i];

		if (ch == '"' || ch == '\\') {
			esc[0] = '\\';
			esc[1] = (char)ch;
			err = buf_put(b, esc, 2);
		} else if (ch && (e = strchr(ctl, ch))) {
			esc[0] = '\\';
			esc[1] = "ntrbf"[e - ctl];
			err = buf_put(b, esc, 2);
		} else if (ch < 0x20 || ch == 0x7f) {
			snprintf(esc, sizeof(esc), "\\u%04x", ch);
			err = buf_puts(b, esc);
		} else {
			err = buf_put(b, (const char *)&ch, 1);
		}
	}
	return err ? err : buf_puts(b, "\"");
}

/* The fields of one line the comparison needs; raw canonical texts. */
struct line {
	struct buf ln_probe;    /* decoded probe name */
	struct buf ln_pid, ln_tid, ln_args;
	int ln_has_probe, ln_has_pid, ln_has_tid, ln_has_args;
	int ln_has_corrupt;
	int ln_ns;              /* --ns on a trace line: nspid, nstid are ids */
};

/* Corruption records of the oracle, as their lines. */
static struct {
	char  **cr_v;
	size_t  cr_n;
} corrupt;

static int corrupt_add(const char *line)
{
	char **v = realloc(corrupt.cr_v, (corrupt.cr_n + 1) * sizeof(*v));
	size_t n = strcspn(line, "\r\n");

	if (!v)
		return -ENOMEM;
	corrupt.cr_v = v;
	v[corrupt.cr_n] = strndup(line, n);
	if (!v[corrupt.cr_n])
		return -ENOMEM;
	corrupt.cr_n++;
	return 0;
}

/* The column of member @key in @line, for messages (1 if not found). */
static long key_col(const char *line, const char *key)
{
	size_t n = strlen(key);
	const char *p;

	for (p = strchr(line, '"'); p; p = strchr(p + 1, '"'))
		if (!strncmp(p + 1, key, n) && p[n + 1] == '"')
			return (long)(p - line) + 1;
	return 1;
}

/* A scalar in canonical JSON spelling: number, string, null, true, false. */
static int put_scalar(struct buf *out, const json_t *v)
{
	const char *s;
	size_t n;

	if ((s = jsonl_number(v)))
		return buf_puts(out, s);
	if ((s = jsonl_string(v, &n)))
		return put_json_string(out, s, n);
	return buf_puts(out, json_is_null(v) ? "null" : json_is_true(v) ? "true" : "false");
}

/* An argument that says it is not plain data, canonical:
 * {"unreadable":"EFAULT"}, {"truncated":"abc"}: one member, a scalar. */
static int put_marker(struct buf *out, const json_t *o, struct jsonl_err *e,
		      long col)
{
	const char *key, *k;
	json_t *v;
	int err;

	if (json_object_size(o) != 1)
		return fail(e, col, "an object in an array must have one member");
	json_object_foreach((json_t *)o, key, v) {
		if (json_is_array(v) || json_is_object(v))
			return fail(e, col, "nested array or object in an array");
		k = jsonl_key(key);
		err = buf_puts(out, "{");
		if (!err)
			err = put_json_string(out, k, strlen(k));
		if (!err)
			err = buf_puts(out, ":");
		if (!err)
			err = put_scalar(out, v);
		if (!err)
			err = buf_puts(out, "}");
		return err;
	}
	return 0;
}

/* An array of scalars and one-member markers, canonical:
 * "[1,-2,\"s\",null,{\"unreadable\":\"EFAULT\"}]". */
static int put_array(struct buf *out, const json_t *a, struct jsonl_err *e, long col)
{
	const json_t *v;
	size_t i;
	int err = buf_puts(out, "[");

	json_array_foreach(a, i, v) {
		if (err)
			break;
		if (json_is_array(v))
			return fail(e, col, "nested array in an array");
		if (i)
			err = buf_puts(out, ",");
		if (!err)
			err = json_is_object(v) ? put_marker(out, v, e, col)
						: put_scalar(out, v);
	}
	return err ? err : buf_puts(out, "]");
}

/* One member, stored if it is a field we compare; every value checked. */
static int take_member(const char *line, const char *key, const json_t *v,
		       struct line *ln, struct jsonl_err *e)
{
	struct buf tmp = { 0 };
	long col = key_col(line, key);
	const char *s;
	size_t n;
	int err = 0;

	/* The user stack (--ustack): objects in a list, judged by stackcmp. */
	if (!strcmp(key, "ustack"))
		return json_is_array(v) ? 0 : fail(e, col, "\"ustack\" is not an array");
	if (json_is_object(v))
		return fail(e, col, "nested object under key \"%s\"", key);
	if (!strcmp(key, "probe")) {
		ln->ln_has_probe = 1;
		if (!(s = jsonl_string(v, &n)))
			return fail(e, col, "\"probe\" is not a string");
		return buf_put(&ln->ln_probe, s, n);
	}
	if (!strcmp(key, "args")) {
		ln->ln_has_args = 1;
		if (!json_is_array(v))
			return fail(e, col, "\"args\" is not an array");
		return put_array(&ln->ln_args, v, e, col);
	}
	if (!strcmp(key, "corrupt"))
		ln->ln_has_corrupt = 1;
	if (ln->ln_ns && (!strcmp(key, "nspid") || !strcmp(key, "nstid")))
		key += 2;
	else if (ln->ln_ns && (!strcmp(key, "pid") || !strcmp(key, "tid")))
		key = "host id";        /* checked as any other key, dropped */
	if (!strcmp(key, "pid") || !strcmp(key, "tid")) {
		int pid = key[0] == 'p';

		*(pid ? &ln->ln_has_pid : &ln->ln_has_tid) = 1;
		if (!jsonl_is_integer(v))
			return fail(e, col, "\"%s\" is not an integer", key);
		return buf_puts(pid ? &ln->ln_pid : &ln->ln_tid, jsonl_number(v));
	}
	/* Other keys: checked, then dropped. */
	if (json_is_array(v))
		err = put_array(&tmp, v, e, col);
	free(tmp.b_p);
	return err;
}

/* A whole line: exactly one flat object (jsonl.c), its fields in @ln. */
static int parse_line(const char *line, struct line *ln, struct jsonl_err *e)
{
	const char *key;
	json_t *obj, *v;
	int err = 0;

	obj = jsonl_parse(line, e);
	if (!obj)
		return -EINVAL;
	json_object_foreach(obj, key, v) {
		err = take_member(line, jsonl_key(key), v, ln, e);
		if (err)
			break;
	}
	json_decref(obj);
	return err;
}

static void line_free(struct line *ln)
{
	free(ln->ln_probe.b_p);
	free(ln->ln_pid.b_p);
	free(ln->ln_tid.b_p);
	free(ln->ln_args.b_p);
}

static int only_match(const struct only *on, const char *probe)
{
	int i;

	if (!on->on_n)
		return 1;
	for (i = 0; i < on->on_n; i++)
		if (!fnmatch(on->on_glob[i], probe, 0))
			return 1;
	return 0;
}

/* Argument @n (1-based) of the canonical array @a replaced by "*". */
static int mask_arg(struct buf *a, long n)
{
	struct buf out = { 0 };
	const char *p = a->b_p, *item = p + 1;
	long k = 1;
	int instr = 0, err = 0;

	for (p = a->b_p + 1; *p && !err; p++) {
		if (instr) {
			if (*p == '\\')
				p++;
			else if (*p == '"')
				instr = 0;
			continue;
		}
		if (*p == '"') {
			instr = 1;
			continue;
		}
		if (*p != ',' && !(*p == ']' && !p[1]))
			continue;
		err = buf_puts(&out, item == a->b_p + 1 ? "[" : ",");
		if (!err && k == n)
			err = buf_puts(&out, "*");
		else if (!err)
			err = buf_put(&out, item, (size_t)(p - item));
		item = p + 1;
		k++;
	}
	if (!err)
		err = buf_puts(&out, "]");
	if (err) {
		free(out.b_p);
		return err;
	}
	if (!strcmp(a->b_p, "[]")) {    /* no argument to mask */
		free(out.b_p);
		return 0;
	}
	free(a->b_p);
	*a = out;
	return 0;
}

static int apply_masks(const struct only *on, struct line *ln)
{
	size_t plen = ln->ln_probe.b_len;
	int i, err = 0;

	for (i = 0; i < on->on_nmask && !err; i++) {
		const char *m = on->on_mask[i], *colon = strrchr(m, ':');

		if ((size_t)(colon - m) == plen && !memcmp(m, ln->ln_probe.b_p, plen))
			err = mask_arg(&ln->ln_args, strtol(colon + 1, NULL, 10));
	}
	return err;
}

static int evset_add(struct evset *es, const struct line *ln)
{
	struct buf key = { 0 };
	int err;

	/* Printed as JSON later: keep the probe name escaped. */
	err = put_json_string(&key, ln->ln_probe.b_p, ln->ln_probe.b_len);
	if (!err)
		err = buf_puts(&key, "\t");
	if (!err)
		err = buf_put(&key, ln->ln_pid.b_p, ln->ln_pid.b_len);
	if (!err)
		err = buf_puts(&key, "\t");
	if (!err)
		err = buf_put(&key, ln->ln_tid.b_p, ln->ln_tid.b_len);
	if (!err)
		err = buf_puts(&key, "\t");
	if (!err)
		err = buf_put(&key, ln->ln_args.b_p, ln->ln_args.b_len);
	if (!err && es->es_n == es->es_cap) {
		size_t cap = es->es_cap ? es->es_cap * 2 : 256;
		char **v = realloc(es->es_v, cap * sizeof(*v));

		if (!v)
			err = -ENOMEM;
		else {
			es->es_v = v;
			es->es_cap = cap;
		}
	}
	if (err) {
		free(key.b_p);
		return err;
	}
	es->es_v[es->es_n++] = key.b_p;
	return 0;
}

/* Check one parsed line and add it if it is an event that passes --only. */
static int take_line(const char *text, struct line *ln, int is_trace,
		     const struct only *on, struct evset *es, struct jsonl_err *e)
{
	if (ln->ln_has_corrupt) {
		if (is_trace || ln->ln_has_probe)
			return fail(e, 1, "a corruption record belongs in the oracle, without \"probe\"");
		return corrupt_add(text);
	}
	if (!ln->ln_has_probe) {
		if (is_trace)
			return fail(e, 1, "event has no \"probe\"");
		return 0;	/* "sema", "step", "note": not events */
	}
	if (!ln->ln_has_pid)
		return fail(e, 1, "event has no \"pid\"");
	if (!ln->ln_has_tid)
		return fail(e, 1, "event has no \"tid\"");
	if (!ln->ln_has_args)
		return fail(e, 1, "event has no \"args\"");
	if (memchr(ln->ln_probe.b_p, '\0', ln->ln_probe.b_len))
		return fail(e, key_col(text, "probe"), "\"probe\" contains a NUL");
	if (!only_match(on, ln->ln_probe.b_p))
		return 0;
	if (apply_masks(on, ln))
		return -ENOMEM;
	return evset_add(es, ln);
}

static int read_file(const char *path, int is_trace, int ns,
		     const struct only *on, struct evset *es)
{
	struct jsonl_err e = { 0 };
	struct line ln;
	char *text = NULL;
	size_t cap = 0;
	ssize_t n;
	long lineno = 0;
	int err = 0;
	FILE *f;

	f = fopen(path, "r");
	if (!f) {
		fprintf(stderr, "oraclecmp: '%s': %s\n", path, strerror(errno));
		return -errno;
	}
	while (!err && (n = getline(&text, &cap, f)) >= 0) {
		lineno++;
		if ((size_t)n != strlen(text)) {
			err = fail(&e, (long)strlen(text) + 1, "NUL byte in line");
			break;
		}
		if (!text[strspn(text, " \t\r\n")])	/* blank, e.g. a final newline */
			continue;
		memset(&ln, 0, sizeof(ln));
		ln.ln_ns = is_trace && ns;
		err = parse_line(text, &ln, &e);
		if (!err)
			err = take_line(text, &ln, is_trace, on, es, &e);
		line_free(&ln);
	}
	if (!err && ferror(f))
		err = fail(&e, 1, "read error: %s", strerror(errno));
	if (err == -ENOMEM)
		fprintf(stderr, "oraclecmp: '%s': out of memory\n", path);
	else if (err)
		fprintf(stderr, "oraclecmp: '%s' line %ld column %ld: malformed: %s\n",
			path, lineno, e.je_col, e.je_text);
	free(text);
	fclose(f);
	return err;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Print one event key "probe\tpid\ttid\targs" as a JSON object. */
static void print_event(const char *what, size_t count, const char *key)
{
	char *k = strdup(key), *f[4], *save = NULL;
	int i;

	if (!k)
		return;
	for (i = 0; i < 4; i++)
		f[i] = strtok_r(i ? NULL : k, "\t", &save);
	printf("%s (x%zu): {\"probe\":%s,\"pid\":%s,\"tid\":%s,\"args\":%s}\n",
	       what, count, f[0], f[1], f[2], f[3]);
	free(k);
}

static size_t run_len(const struct evset *es, size_t i)
{
	size_t j = i;

	while (j < es->es_n && !strcmp(es->es_v[j], es->es_v[i]))
		j++;
	return j - i;
}

/* What a merge walk of the two sorted multisets found. */
struct tally {
	size_t t_match, t_missing, t_unexp;
	size_t t_shown_missing, t_shown_unexp;
};

static void report(struct tally *t, int missing, const char *key, size_t n)
{
	size_t *shown = missing ? &t->t_shown_missing : &t->t_shown_unexp;

	if (missing)
		t->t_missing += n;
	else
		t->t_unexp += n;
	if ((*shown)++ < OC_SHOW_MAX)
		print_event(missing ? "missing" : "unexpected", n, key);
}

static void compare(const struct evset *o, const struct evset *t, struct tally *ty)
{
	size_t i = 0, j = 0, ni, nj;
	int d;

	while (i < o->es_n || j < t->es_n) {
		if (i == o->es_n)
			d = 1;
		else if (j == t->es_n)
			d = -1;
		else
			d = strcmp(o->es_v[i], t->es_v[j]);
		ni = d <= 0 ? run_len(o, i) : 0;
		nj = d >= 0 ? run_len(t, j) : 0;
		if (d < 0) {
			report(ty, 1, o->es_v[i], ni);
		} else if (d > 0) {
			report(ty, 0, t->es_v[j], nj);
		} else {
			ty->t_match += ni < nj ? ni : nj;
			if (ni > nj)
				report(ty, 1, o->es_v[i], ni - nj);
			if (nj > ni)
				report(ty, 0, t->es_v[j], nj - ni);
		}
		i += ni;
		j += nj;
	}
}

static void evset_free(struct evset *es)
{
	while (es->es_n)
		free(es->es_v[--es->es_n]);
	free(es->es_v);
}

static void usage(void)
{
	fprintf(stderr, "usage: oraclecmp [--only GLOB]... [--mask PROBE:N]... [--ns] ORACLE TRACE\n");
}

int main(int argc, char **argv)
{
	struct evset oracle = { 0 }, trace = { 0 };
	struct only on = { 0 };
	struct tally ty = { 0 };
	int i, ns = 0, rc = 2;

	on.on_glob = calloc((size_t)argc, sizeof(*on.on_glob));
	on.on_mask = calloc((size_t)argc, sizeof(*on.on_mask));
	if (!on.on_glob || !on.on_mask)
		return 2;
	for (i = 1; i < argc && argv[i][0] == '-' && argv[i][1]; i++) {
		if (!strcmp(argv[i], "--")) {
			i++;
			break;
		}
		if (!strcmp(argv[i], "--ns")) {
			ns = 1;
			continue;
		}
		if (!strcmp(argv[i], "--mask")) {
			const char *c = ++i < argc ? strrchr(argv[i], ':') : NULL;
			char *end;
			long n = c ? strtol(c + 1, &end, 10) : 0;

			if (!c || c == argv[i] || !c[1] || *end || n < 1 || n > 64) {
				fprintf(stderr, "oraclecmp: --mask needs PROBE:N with N 1..64, got '%s'\n",
					i < argc ? argv[i] : "");
				goto out_usage;
			}
			on.on_mask[on.on_nmask++] = argv[i];
			continue;
		}
		if (strcmp(argv[i], "--only")) {
			fprintf(stderr, "oraclecmp: unknown option '%s'\n", argv[i]);
			goto out_usage;
		}
		if (++i == argc || !argv[i][0]) {
			fprintf(stderr, "oraclecmp: --only needs a non-empty GLOB\n");
			goto out_usage;
		}
		on.on_glob[on.on_n++] = argv[i];
	}
	if (argc - i != 2) {
		fprintf(stderr, "oraclecmp: expected ORACLE and TRACE, got %d file argument(s)\n",
			argc - i);
		goto out_usage;
	}
	if (read_file(argv[i], 0, 0, &on, &oracle) ||
	    read_file(argv[i + 1], 1, ns, &on, &trace))
		goto out;
	/* qsort(NULL, 0, ...) is undefined (nonnull): an empty side has no
	 * vector (make sanitize). */
	if (oracle.es_n > 1)
		qsort(oracle.es_v, oracle.es_n, sizeof(char *), cmp_str);
	if (trace.es_n > 1)
		qsort(trace.es_v, trace.es_n, sizeof(char *), cmp_str);
	compare(&oracle, &trace, &ty);
	if (ty.t_shown_missing > OC_SHOW_MAX)
		printf("... %zu more distinct missing events not shown\n",
		       ty.t_shown_missing - OC_SHOW_MAX);
	if (ty.t_shown_unexp > OC_SHOW_MAX)
		printf("... %zu more distinct unexpected events not shown\n",
		       ty.t_shown_unexp - OC_SHOW_MAX);
	for (size_t k = 0; k < corrupt.cr_n && k < OC_SHOW_MAX; k++)
		printf("traced program corrupted: %s\n", corrupt.cr_v[k]);
	if (corrupt.cr_n > OC_SHOW_MAX)
		printf("... %zu more corruption records not shown\n",
		       corrupt.cr_n - OC_SHOW_MAX);
	if (!ty.t_missing && !ty.t_unexp && !corrupt.cr_n) {
		printf("oraclecmp: %zu events match\n", ty.t_match);
		rc = 0;
	} else if (!ty.t_missing && !ty.t_unexp) {
		printf("oraclecmp: CORRUPTED: %zu events match, but the oracle has "
		       "%zu corruption record(s): traced program corrupted\n",
		       ty.t_match, corrupt.cr_n);
		rc = 1;
	} else {
		printf("oraclecmp: MISMATCH: %zu events match, %zu missing, %zu unexpected "
		       "(oracle %zu, trace %zu)%s\n", ty.t_match, ty.t_missing, ty.t_unexp,
		       oracle.es_n, trace.es_n,
		       corrupt.cr_n ? "; and the traced program corrupted" : "");
		rc = 1;
	}
	goto out;
out_usage:
	usage();
out:
	evset_free(&oracle);
	evset_free(&trace);
	while (corrupt.cr_n)
		free(corrupt.cr_v[--corrupt.cr_n]);
	free(corrupt.cr_v);
	free(on.on_glob);
	free(on.on_mask);
	return rc;
}
