/*
 * jsonl.c — the JSON-lines reader of the test tools, on libjansson.
 *
 * The tools judge a tracer by exact values: 18446744073709551615 (a u64
 * argument) must differ from 18446744073709551614 and from -1.  jansson
 * keeps an integer in a json_int_t (long long): above 2^63 - 1 it refuses
 * the line ("too big integer"), and JSON_DECODE_INT_AS_REAL would go
 * through a double, which is the very loss the tools exist to catch.  So
 * before jansson sees a line, its numbers are taken out as text: one pass
 * over the line, which knows only where strings begin and end, turns
 * every number into the string "#TEXT" (TEXT checked against JSON's
 * number grammar and 64 bits here, and made canonical) and every string
 * into "$..." (keys too), so that a number and a string can never be
 * confused.  jansson then does the rest — objects, arrays, escapes,
 * surrogates, UTF-8, duplicate keys, literals — and the accessors of
 * jsonl.h strip the tags.  A byte map from the tagged text back to the
 * line puts jansson's error columns where the user wrote the text.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "jsonl.h"

#define JSONL_STR '$'
#define JSONL_NUM '#'

/* The tagged text and, per byte of it, the offset in the line.  Tags add
 * at most 3 bytes to a token of at least 1 (a one-digit number becomes
 * "#1"): 4 bytes per byte of the line is room enough, allocated once. */
struct tagged {
	char   *tg_text;
	size_t *tg_from;
	size_t  tg_len;
};

static int tg_alloc(struct tagged *t, size_t linelen)
{
	size_t cap = 4 * linelen + 1;

	t->tg_text = malloc(cap);
	t->tg_from = malloc(cap * sizeof(*t->tg_from));
	t->tg_len = 0;
	if (!t->tg_text || !t->tg_from)
		return -ENOMEM;
	t->tg_text[0] = '\0';
	return 0;
}

static int tg_put(struct tagged *t, const char *s, size_t n, size_t from)
{
	memcpy(t->tg_text + t->tg_len, s, n);
	for (size_t i = 0; i < n; i++)
		t->tg_from[t->tg_len + i] = from;
	t->tg_len += n;
	t->tg_text[t->tg_len] = '\0';
	return 0;
}

static int err_set(struct jsonl_err *e, size_t off, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int err_set(struct jsonl_err *e, size_t off, const char *fmt, ...)
{
	va_list ap;

	e->je_col = (long)off + 1;
	va_start(ap, fmt);
	vsnprintf(e->je_text, sizeof(e->je_text), fmt, ap);
	va_end(ap);
	return -EINVAL;
}

/* Is the decimal digit string d (no sign, no leading zeros) <= max? */
static int digits_le(const char *d, size_t n, const char *max)
{
	size_t m = strlen(max);

	if (n != m)
		return n < m;
	return strncmp(d, max, n) <= 0;
}

static int is_digit(char c)
{
	return c >= '0' && c <= '9';
}

/*
 * The number at @line + *pos: checked, its canonical text appended to @t
 * as the tagged string "#TEXT", *pos moved past it.  Integers must fit
 * int64 (negative) or uint64 and are kept as canonical text ("-0" is
 * "0"); numbers with a fraction or exponent are kept verbatim, since no
 * tracer conversion could make two spellings equal.
 */
static int lift_number(const char *line, size_t *pos, struct tagged *t,
		       struct jsonl_err *e)
{
	const char *start = line + *pos, *p = start, *d;
	int neg = 0, frac = 0, err;
	size_t nd;
	char tag[2] = { '"', JSONL_NUM };

	if (*p == '-') {
		neg = 1;
		p++;
	}
	d = p;
	if (*p == '0') {
		p++;
		if (is_digit(*p))
			return err_set(e, (size_t)(p - line), "number with a leading zero");
	} else if (*p >= '1' && *p <= '9') {
		while (is_digit(*p))
			p++;
	} else {
		return err_set(e, (size_t)(p - line), "bad number");
	}
	nd = (size_t)(p - d);
	if (*p == '.') {
		frac = 1;
		p++;
		if (!is_digit(*p))
			return err_set(e, (size_t)(p - line), "bad number: no digit after '.'");
		while (is_digit(*p))
			p++;
	}
	if (*p == 'e' || *p == 'E') {
		frac = 1;
		p++;
		if (*p == '+' || *p == '-')
			p++;
		if (!is_digit(*p))
			return err_set(e, (size_t)(p - line), "bad number: no digit in exponent");
		while (is_digit(*p))
			p++;
	}
	if (!frac && neg && !digits_le(d, nd, "9223372036854775808"))
		return err_set(e, (size_t)(p - line), "integer %.*s below the signed 64-bit range",
			       (int)(p - start), start);
	if (!frac && !neg && !digits_le(d, nd, "18446744073709551615"))
		return err_set(e, (size_t)(p - line), "integer %.*s above the unsigned 64-bit range",
			       (int)(p - start), start);
	err = tg_put(t, tag, 2, *pos);
	if (!err && !frac && neg && nd == 1 && *d == '0')       /* -0 is 0 */
		err = tg_put(t, d, 1, (size_t)(d - line));
	else if (!err)
		err = tg_put(t, start, (size_t)(p - start), *pos);
	if (!err)
		err = tg_put(t, "\"", 1, (size_t)(p - line) - 1);
	*pos = (size_t)(p - line);
	return err;
}

/* The line with its strings and numbers tagged (see the top). */
static int lift(const char *line, struct tagged *t, struct jsonl_err *e)
{
	size_t i = 0;
	int err = 0, instr = 0;
	char tag[2] = { '"', JSONL_STR };

	while (!err && line[i]) {
		char c = line[i];

		if (instr) {
			if (c == '\\' && line[i + 1]) {
				err = tg_put(t, line + i, 2, i);
				i += 2;
				continue;
			}
			instr = c != '"';
			err = tg_put(t, &c, 1, i++);
		} else if (c == '"') {
			instr = 1;
			err = tg_put(t, tag, 2, i++);
		} else if (c == '-' || is_digit(c)) {
			err = lift_number(line, &i, t, e);
		} else {
			err = tg_put(t, &c, 1, i++);
		}
	}
	return err;
}

/* jansson's message, its tags taken out ("'$probe'" reads "'probe'"). */
static void untag(char *s)
{
	char *o = s;

	for (char *p = s; *p; p++) {
		*o++ = *p;
		if (*p == '"' && (p[1] == JSONL_STR || p[1] == JSONL_NUM))
			p++;
	}
	*o = '\0';
}

json_t *jsonl_parse(const char *line, struct jsonl_err *e)
{
	struct tagged t = { 0 };
	json_error_t je;
	json_t *obj = NULL;
	size_t n = strspn(line, " \t\r\n"), end;
	const char *key;
	int err;

	memset(e, 0, sizeof(*e));
	if (line[n] != '{') {
		err_set(e, n, "expected '{' at the start of the line");
		return NULL;
	}
	err = tg_alloc(&t, strlen(line));
	if (!err)
		err = lift(line, &t, e);
	if (err == -ENOMEM)
		err_set(e, 0, "out of memory");
	if (!err) {
		/* NUL in a string is the caller's to judge (\u0000). */
		obj = json_loadb(t.tg_text, t.tg_len, JSON_REJECT_DUPLICATES |
				 JSON_DISABLE_EOF_CHECK | JSON_ALLOW_NUL, &je);
		if (!obj) {
			size_t at = je.position > 0 ? (size_t)je.position - 1 : 0;

			if (at >= t.tg_len)
				at = t.tg_len ? t.tg_len - 1 : 0;
			untag(je.text);
			err_set(e, t.tg_len ? t.tg_from[at] : 0, "%s", je.text);
			if (json_error_code(&je) == json_error_duplicate_key &&
			    (key = strstr(je.text, " near '")))
				snprintf(e->je_text, sizeof(e->je_text), "duplicate key %.*s",
					 (int)strlen(key + 7) - 1, key + 7);
		} else {
			/* JSON_DISABLE_EOF_CHECK: position is what jansson read. */
			end = (size_t)je.position;
			if (end < t.tg_len && t.tg_text[end + strspn(t.tg_text + end, " \t\r\n")]) {
				err_set(e, t.tg_from[end], "trailing characters after the object");
				json_decref(obj);
				obj = NULL;
			}
		}
	}
	free(t.tg_text);
	free(t.tg_from);
	return obj;
}

json_t *jsonl_get(const json_t *obj, const char *key)
{
	char buf[256];
	int n = snprintf(buf, sizeof(buf), "%c%s", JSONL_STR, key);

	if (n < 0 || (size_t)n >= sizeof(buf))
		return NULL;
	return json_object_get(obj, buf);
}

const char *jsonl_key(const char *key)
{
	return key[0] == JSONL_STR ? key + 1 : key;
}

const char *jsonl_string(const json_t *v, size_t *len)
{
	const char *s = json_string_value(v);

	if (!s || s[0] != JSONL_STR)
		return NULL;
	if (len)
		*len = json_string_length(v) - 1;
	return s + 1;
}

const char *jsonl_number(const json_t *v)
{
	const char *s = json_string_value(v);

	return s && s[0] == JSONL_NUM ? s + 1 : NULL;
}

int jsonl_is_integer(const json_t *v)
{
	const char *s = jsonl_number(v);

	return s && !strpbrk(s, ".eE");
}
