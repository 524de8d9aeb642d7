/*
 * oraclecmp — judge a tracer by a fixture's oracle log, exactly.
 *
 *   oraclecmp [--only GLOB]... [--mask PROBE:N]... ORACLE TRACE
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
 * only if it is the same integer or the same string.  That is why this tool
 * parses JSON itself — a parser that goes through double (jq 1.6 does) makes
 * 18446744073709551615 equal to 18446744073709551614.  Integers are kept as
 * canonical decimal text, range-checked against 64 bits, never converted;
 * strings are decoded and re-encoded so that "\u0041" equals "A".
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

/* How many distinct differing events to print per kind before eliding. */
#define OC_SHOW_MAX 50

/* A growable byte buffer; every canonical value is built in one. */
struct buf {
	char   *b_p;
	size_t  b_len, b_cap;
};

/* The parser's cursor over one line, and where to blame an error. */
struct cursor {
	const char *c_p;
	const char *c_start;    /* the line, for the column in messages */
	const char *c_file;
	long        c_line;
	long        c_col;
	char        c_err[256];
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

static int fail(struct cursor *c, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static int fail(struct cursor *c, const char *fmt, ...)
{
	va_list ap;

	if (c->c_err[0])	/* keep the innermost reason */
		return -EINVAL;
	c->c_col = c->c_p - c->c_start + 1;
	va_start(ap, fmt);
	vsnprintf(c->c_err, sizeof(c->c_err), fmt, ap);
	va_end(ap);
	return -EINVAL;
}

static void skip_ws(struct cursor *c)
{
	while (*c->c_p == ' ' || *c->c_p == '\t' || *c->c_p == '\r' ||
	       *c->c_p == '\n')
		c->c_p++;
}

static int hexval(char ch)
{
	if (ch >= '0' && ch <= '9')
		return ch - '0';
	if (ch >= 'a' && ch <= 'f')
		return ch - 'a' + 10;
	if (ch >= 'A' && ch <= 'F')
		return ch - 'A' + 10;
	return -1;
}

static int read_hex4(struct cursor *c, unsigned *out)
{
	unsigned v = 0;
	int i, h;

	for (i = 0; i < 4; i++) {
		h = hexval(c->c_p[i]);
		if (h < 0)
			return fail(c, "bad \\u escape in string");
		v = v * 16 + (unsigned)h;
	}
	c->c_p += 4;
	*out = v;
	return 0;
}

static int put_utf8(struct buf *b, unsigned cp)
{
	char s[4];
	size_t n;

	if (cp < 0x80) {
		s[0] = (char)cp;
		n = 1;
	} else if (cp < 0x800) {
		s[0] = (char)(0xc0 | (cp >> 6));
		s[1] = (char)(0x80 | (cp & 0x3f));
		n = 2;
	} else if (cp < 0x10000) {
		s[0] = (char)(0xe0 | (cp >> 12));
		s[1] = (char)(0x80 | ((cp >> 6) & 0x3f));
		s[2] = (char)(0x80 | (cp & 0x3f));
		n = 3;
	} else {
		s[0] = (char)(0xf0 | (cp >> 18));
		s[1] = (char)(0x80 | ((cp >> 12) & 0x3f));
		s[2] = (char)(0x80 | ((cp >> 6) & 0x3f));
		s[3] = (char)(0x80 | (cp & 0x3f));
		n = 4;
	}
	return buf_put(b, s, n);
}

/* A \u escape, with a surrogate pair joined into one code point. */
static int parse_u_escape(struct cursor *c, struct buf *out)
{
	unsigned hi, lo;
	int err;

	err = read_hex4(c, &hi);
	if (err)
		return err;
	if (hi >= 0xdc00 && hi <= 0xdfff)
		return fail(c, "lone low surrogate \\u%04x in string", hi);
	if (hi < 0xd800 || hi > 0xdbff)
		return put_utf8(out, hi);
	if (c->c_p[0] != '\\' || c->c_p[1] != 'u')
		return fail(c, "high surrogate \\u%04x not followed by a low one", hi);
	c->c_p += 2;
	err = read_hex4(c, &lo);
	if (err)
		return err;
	if (lo < 0xdc00 || lo > 0xdfff)
		return fail(c, "high surrogate \\u%04x followed by \\u%04x", hi, lo);
	return put_utf8(out, 0x10000 + ((hi - 0xd800) << 10) + (lo - 0xdc00));
}

/* Decode a JSON string (cursor on the opening quote) into raw bytes. */
static int parse_string(struct cursor *c, struct buf *out)
{
	static const char from[] = "\"\\/bfnrt", to[] = "\"\\/\b\f\n\r\t";
	const char *e;
	int err = 0;

	out->b_len = 0;
	if (buf_put(out, "", 0))
		return -ENOMEM;
	if (*c->c_p != '"')
		return fail(c, "expected a string");
	c->c_p++;
	while (!err && *c->c_p != '"') {
		unsigned char ch = (unsigned char)*c->c_p;

		if (ch == '\0')
			return fail(c, "unterminated string");
		if (ch < 0x20)
			return fail(c, "raw control character 0x%02x in string", ch);
		c->c_p++;
		if (ch != '\\') {
			err = buf_put(out, (const char *)&ch, 1);
			continue;
		}
		if (*c->c_p == 'u') {
			c->c_p++;
			err = parse_u_escape(c, out);
			continue;
		}
		e = *c->c_p ? strchr(from, *c->c_p) : NULL;
		if (!e)
			return fail(c, "bad escape '\\%c' in string", *c->c_p);
		err = buf_put(out, &to[e - from], 1);
		c->c_p++;
	}
	if (err)
		return err;
	c->c_p++;
	return 0;
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

/* Is the decimal digit string d (no sign, no leading zeros) <= max? */
static int digits_le(const char *d, size_t n, const char *max)
{
	size_t m = strlen(max);

	if (n != m)
		return n < m;
	return strncmp(d, max, n) <= 0;
}

/*
 * A JSON number.  Integers must fit int64 (negative) or uint64 and are
 * kept as canonical text; numbers with a fraction or exponent are kept
 * verbatim, since no tracer conversion could make two spellings equal.
 */
static int parse_number(struct cursor *c, struct buf *out)
{
	const char *start = c->c_p, *d;
	int neg = 0, frac = 0;
	size_t nd;

	out->b_len = 0;
	if (*c->c_p == '-') {
		neg = 1;
		c->c_p++;
	}
	d = c->c_p;
	if (*c->c_p == '0') {
		c->c_p++;
		if (*c->c_p >= '0' && *c->c_p <= '9')
			return fail(c, "number with a leading zero");
	} else if (*c->c_p >= '1' && *c->c_p <= '9') {
		while (*c->c_p >= '0' && *c->c_p <= '9')
			c->c_p++;
	} else {
		return fail(c, "bad number");
	}
	nd = (size_t)(c->c_p - d);
	if (*c->c_p == '.') {
		frac = 1;
		c->c_p++;
		if (!(*c->c_p >= '0' && *c->c_p <= '9'))
			return fail(c, "bad number: no digit after '.'");
		while (*c->c_p >= '0' && *c->c_p <= '9')
			c->c_p++;
	}
	if (*c->c_p == 'e' || *c->c_p == 'E') {
		frac = 1;
		c->c_p++;
		if (*c->c_p == '+' || *c->c_p == '-')
			c->c_p++;
		if (!(*c->c_p >= '0' && *c->c_p <= '9'))
			return fail(c, "bad number: no digit in exponent");
		while (*c->c_p >= '0' && *c->c_p <= '9')
			c->c_p++;
	}
	if (frac)
		return buf_put(out, start, (size_t)(c->c_p - start));
	if (neg && !digits_le(d, nd, "9223372036854775808"))
		return fail(c, "integer %.*s below the signed 64-bit range",
			    (int)(c->c_p - start), start);
	if (!neg && !digits_le(d, nd, "18446744073709551615"))
		return fail(c, "integer %.*s above the unsigned 64-bit range",
			    (int)(c->c_p - start), start);
	if (neg && !(nd == 1 && *d == '0'))	/* -0 is 0 */
		return buf_put(out, start, (size_t)(c->c_p - start));
	return buf_put(out, d, nd);
}

static int parse_literal(struct cursor *c, struct buf *out)
{
	static const char *const lit[] = { "null", "true", "false" };
	size_t i, n;

	out->b_len = 0;
	for (i = 0; i < sizeof(lit) / sizeof(lit[0]); i++) {
		n = strlen(lit[i]);
		if (!strncmp(c->c_p, lit[i], n)) {
			c->c_p += n;
			return buf_puts(out, lit[i]);
		}
	}
	return fail(c, "unexpected character '%c'", *c->c_p ? *c->c_p : '?');
}

/* A scalar in canonical JSON spelling: number, string, null, true, false. */
static int parse_scalar(struct cursor *c, struct buf *out)
{
	struct buf raw = { 0 };
	int err;

	if (*c->c_p == '-' || (*c->c_p >= '0' && *c->c_p <= '9'))
		return parse_number(c, out);
	if (*c->c_p != '"')
		return parse_literal(c, out);
	err = parse_string(c, &raw);
	if (!err) {
		out->b_len = 0;
		err = put_json_string(out, raw.b_p, raw.b_len);
	}
	free(raw.b_p);
	return err;
}

/* An array of scalars, canonical: "[1,-2,\"s\",null]". */
static int parse_array(struct cursor *c, struct buf *out)
{
	struct buf item = { 0 };
	int err = 0, first = 1;

	out->b_len = 0;
	if (*c->c_p != '[')
		return fail(c, "expected an array");
	c->c_p++;
	err = buf_puts(out, "[");
	skip_ws(c);
	if (!err && *c->c_p == ']')
		goto close;
	while (!err) {
		skip_ws(c);
		if (*c->c_p == '[' || *c->c_p == '{') {
			err = fail(c, "nested array or object in an array");
			break;
		}
		err = parse_scalar(c, &item);
		if (!err && !first)
			err = buf_puts(out, ",");
		if (!err)
			err = buf_put(out, item.b_p, item.b_len);
		first = 0;
		skip_ws(c);
		if (err || *c->c_p == ']')
			break;
		if (*c->c_p != ',')
			err = fail(c, "expected ',' or ']' in array");
		c->c_p++;
	}
close:
	if (!err) {
		c->c_p++;
		err = buf_puts(out, "]");
	}
	free(item.b_p);
	return err;
}

/* The fields of one line the comparison needs; raw canonical texts. */
struct line {
	struct buf ln_probe;    /* decoded probe name */
	struct buf ln_pid, ln_tid, ln_args;
	int ln_has_probe, ln_has_pid, ln_has_tid, ln_has_args;
	int ln_has_corrupt;
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

static int want_int(struct cursor *c, const char *key, struct buf *v)
{
	if (!v->b_len || !(v->b_p[0] == '-' || (v->b_p[0] >= '0' && v->b_p[0] <= '9')) ||
	    strpbrk(v->b_p, ".eE"))
		return fail(c, "\"%s\" is not an integer", key);
	return 0;
}

/* One member value, stored if it is a field we compare. */
static int parse_member(struct cursor *c, const char *key, struct line *ln)
{
	struct buf tmp = { 0 };
	int err;

	if (!strcmp(key, "probe")) {
		ln->ln_has_probe = 1;
		if (*c->c_p != '"')
			return fail(c, "\"probe\" is not a string");
		return parse_string(c, &ln->ln_probe);
	}
	if (!strcmp(key, "args")) {
		ln->ln_has_args = 1;
		if (*c->c_p != '[')
			return fail(c, "\"args\" is not an array");
		return parse_array(c, &ln->ln_args);
	}
	if (!strcmp(key, "pid")) {
		ln->ln_has_pid = 1;
		err = parse_scalar(c, &ln->ln_pid);
		return err ? err : want_int(c, key, &ln->ln_pid);
	}
	if (!strcmp(key, "corrupt"))
		ln->ln_has_corrupt = 1;
	if (!strcmp(key, "tid")) {
		ln->ln_has_tid = 1;
		err = parse_scalar(c, &ln->ln_tid);
		return err ? err : want_int(c, key, &ln->ln_tid);
	}
	/* Other keys: validated, then dropped. */
	err = *c->c_p == '[' ? parse_array(c, &tmp) : parse_scalar(c, &tmp);
	free(tmp.b_p);
	return err;
}

/* Keys seen so far on this line, to reject duplicates. */
struct keys {
	char  **k_v;
	size_t  k_n;
};

static int keys_add(struct cursor *c, struct keys *k, const char *key)
{
	char **v;
	size_t i;

	for (i = 0; i < k->k_n; i++)
		if (!strcmp(k->k_v[i], key))
			return fail(c, "duplicate key \"%s\"", key);
	v = realloc(k->k_v, (k->k_n + 1) * sizeof(*v));
	if (!v)
		return -ENOMEM;
	k->k_v = v;
	v[k->k_n] = strdup(key);
	if (!v[k->k_n])
		return -ENOMEM;
	k->k_n++;
	return 0;
}

static void keys_free(struct keys *k)
{
	while (k->k_n)
		free(k->k_v[--k->k_n]);
	free(k->k_v);
}

/* A whole line: exactly one flat object, nothing after it. */
static int parse_object(struct cursor *c, struct line *ln)
{
	struct buf key = { 0 };
	struct keys seen = { 0 };
	int err = 0;

	skip_ws(c);
	if (*c->c_p != '{')
		return fail(c, "expected '{' at the start of the line");
	c->c_p++;
	skip_ws(c);
	if (*c->c_p == '}')
		goto close;
	while (!err) {
		skip_ws(c);
		err = parse_string(c, &key);
		if (!err)
			err = keys_add(c, &seen, key.b_p);
		if (err)
			break;
		skip_ws(c);
		if (*c->c_p != ':') {
			err = fail(c, "expected ':' after key \"%s\"", key.b_p);
			break;
		}
		c->c_p++;
		skip_ws(c);
		if (*c->c_p == '{') {
			err = fail(c, "nested object under key \"%s\"", key.b_p);
			break;
		}
		err = parse_member(c, key.b_p, ln);
		skip_ws(c);
		if (err || *c->c_p == '}')
			break;
		if (*c->c_p != ',')
			err = fail(c, "expected ',' or '}' in object");
		c->c_p++;
	}
close:
	if (!err) {
		c->c_p++;
		skip_ws(c);
		if (*c->c_p)
			err = fail(c, "trailing characters after the object");
	}
	free(key.b_p);
	keys_free(&seen);
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
static int take_line(struct cursor *c, struct line *ln, int is_trace,
		     const struct only *on, struct evset *es)
{
	if (ln->ln_has_corrupt) {
		if (is_trace || ln->ln_has_probe)
			return fail(c, "a corruption record belongs in the oracle, without \"probe\"");
		return corrupt_add(c->c_start);
	}
	if (!ln->ln_has_probe) {
		if (is_trace)
			return fail(c, "event has no \"probe\"");
		return 0;	/* "sema", "step", "note": not events */
	}
	if (!ln->ln_has_pid)
		return fail(c, "event has no \"pid\"");
	if (!ln->ln_has_tid)
		return fail(c, "event has no \"tid\"");
	if (!ln->ln_has_args)
		return fail(c, "event has no \"args\"");
	if (memchr(ln->ln_probe.b_p, '\0', ln->ln_probe.b_len))
		return fail(c, "\"probe\" contains a NUL");
	if (!only_match(on, ln->ln_probe.b_p))
		return 0;
	if (apply_masks(on, ln))
		return -ENOMEM;
	return evset_add(es, ln);
}

static int read_file(const char *path, int is_trace, const struct only *on,
		     struct evset *es)
{
	struct cursor c = { .c_file = path };
	struct line ln;
	char *text = NULL;
	size_t cap = 0;
	ssize_t n;
	int err = 0;
	FILE *f;

	f = fopen(path, "r");
	if (!f) {
		fprintf(stderr, "oraclecmp: '%s': %s\n", path, strerror(errno));
		return -errno;
	}
	while (!err && (n = getline(&text, &cap, f)) >= 0) {
		c.c_line++;
		c.c_p = c.c_start = text;
		if ((size_t)n != strlen(text)) {
			err = fail(&c, "NUL byte in line");
			break;
		}
		skip_ws(&c);
		if (!*c.c_p)	/* blank line, e.g. a final newline */
			continue;
		memset(&ln, 0, sizeof(ln));
		err = parse_object(&c, &ln);
		if (!err)
			err = take_line(&c, &ln, is_trace, on, es);
		line_free(&ln);
	}
	if (!err && ferror(f))
		err = fail(&c, "read error: %s", strerror(errno));
	if (err == -ENOMEM)
		fprintf(stderr, "oraclecmp: '%s': out of memory\n", path);
	else if (err)
		fprintf(stderr, "oraclecmp: '%s' line %ld column %ld: malformed: %s\n",
			path, c.c_line, c.c_col, c.c_err);
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
	fprintf(stderr, "usage: oraclecmp [--only GLOB]... [--mask PROBE:N]... ORACLE TRACE\n");
}

int main(int argc, char **argv)
{
	struct evset oracle = { 0 }, trace = { 0 };
	struct only on = { 0 };
	struct tally ty = { 0 };
	int i, rc = 2;

	on.on_glob = calloc((size_t)argc, sizeof(*on.on_glob));
	on.on_mask = calloc((size_t)argc, sizeof(*on.on_mask));
	if (!on.on_glob || !on.on_mask)
		return 2;
	for (i = 1; i < argc && argv[i][0] == '-' && argv[i][1]; i++) {
		if (!strcmp(argv[i], "--")) {
			i++;
			break;
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
	if (read_file(argv[i], 0, &on, &oracle) || read_file(argv[i + 1], 1, &on, &trace))
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
