/*
 * pc-jsel — pick fields out of JSON lines (a fixture's oracle log, a
 * tracer's events), for the suites' helpers.
 *
 *   pc-jsel [-w KEY=VALUE]... [-W KEY=VALUE]... [-t KEY]... [-d SEP]
 *           FIELD... FILE
 *
 * For every object of FILE ('-': stdin) that passes every test, print its
 * FIELDs joined by SEP (default a tab), one line per object:
 *   -w KEY=VALUE   member KEY's text is VALUE
 *   -W KEY=VALUE   member KEY is missing or its text is not VALUE
 *   -t KEY         member KEY is present and neither null nor false
 * A FIELD is a member's name, or a path through arrays and objects
 * (args.0: the first element of member args).  A value's text is what
 * `jq -r` prints for a string (its bytes), true, false or null (also for
 * a missing member), and for a number its exact decimal: jq 1.6 takes a
 * number through a double, this does not (harness/tools/jsonl.c).  An
 * array or object as a FIELD is an error.
 *
 * Why not jq: jq 1.6 (Debian 12) compiles its builtins at every start,
 * ~40 ms of CPU; the suites' helpers called it ~800 times a make check.
 *
 * Exit: 0 (also when nothing matched), 2 bad usage, an unreadable file or
 * a line that is not one JSON object (stderr names the file, line and
 * reason).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "jsonl.h"

#define JS_MAX 32       /* tests, or fields */

struct test {
	char        t_kind;         /* 'w', 'W' or 't' */
	const char *t_key;
	const char *t_value;        /* w, W */
};

struct jsel {
	struct test  js_test[JS_MAX];
	int          js_ntest;
	const char  *js_field[JS_MAX];
	int          js_nfield;
	const char  *js_sep;
	const char  *js_file;
	long         js_line;
};

static int usage(const char *why)
{
	fprintf(stderr, "pc-jsel: %s\n"
		"usage: pc-jsel [-w KEY=VALUE]... [-W KEY=VALUE]... [-t KEY]... "
		"[-d SEP] FIELD... FILE\n", why);
	return 2;
}

/* The text of a scalar as jq -r prints it; NULL for an array or object. */
static const char *text_of(const json_t *v)
{
	if (!v || json_is_null(v))
		return "null";
	if (json_is_true(v))
		return "true";
	if (json_is_false(v))
		return "false";
	if (jsonl_number(v))
		return jsonl_number(v);
	return jsonl_string(v, NULL);
}

/* Follow FIELD ("a", "a.0", "a.b") from @obj; NULL if missing. */
static const json_t *walk(const json_t *obj, const char *field)
{
	char part[256];
	const char *p = field;

	while (obj && *p) {
		size_t n = strcspn(p, ".");
		char *end;

		if (n >= sizeof(part))
			return NULL;
		memcpy(part, p, n);
		part[n] = '\0';
		p += n + (p[n] == '.');
		if (json_is_object(obj)) {
			obj = jsonl_get(obj, part);
		} else if (json_is_array(obj)) {
			unsigned long i = strtoul(part, &end, 10);

			obj = *part && !*end ? json_array_get(obj, i) : NULL;
		} else {
			return NULL;
		}
	}
	return obj;
}

static int passes(const struct jsel *js, const json_t *obj)
{
	for (int i = 0; i < js->js_ntest; i++) {
		const struct test *t = &js->js_test[i];
		const json_t *v = jsonl_get(obj, t->t_key);
		const char *s = v ? text_of(v) : NULL;
		int same = s && !strcmp(s, t->t_value ? t->t_value : "");

		if (t->t_kind == 't' && (!v || json_is_null(v) || json_is_false(v)))
			return 0;
		if (t->t_kind == 'w' && !same)
			return 0;
		if (t->t_kind == 'W' && same)
			return 0;
	}
	return 1;
}

static int fail_line(const struct jsel *js, long col, const char *why)
{
	fprintf(stderr, "pc-jsel: %s:%ld", js->js_file, js->js_line);
	if (col > 0)
		fprintf(stderr, ":%ld", col);
	fprintf(stderr, ": %s\n", why);
	return 2;
}

static int print_fields(const struct jsel *js, const json_t *obj)
{
	for (int i = 0; i < js->js_nfield; i++) {
		const char *s = text_of(walk(obj, js->js_field[i]));

		if (!s) {
			char why[300];

			snprintf(why, sizeof(why), "field '%s' is an array or an object, not a value",
				 js->js_field[i]);
			return fail_line(js, 0, why);
		}
		fputs(s, stdout);
		fputs(i + 1 < js->js_nfield ? js->js_sep : "\n", stdout);
	}
	return 0;
}

static int one_line(struct jsel *js, const char *line)
{
	struct jsonl_err err;
	json_t *obj;
	int st = 0;

	if (!line[strspn(line, " \t\r\n")])
		return 0;
	obj = jsonl_parse(line, &err);
	if (!obj)
		return fail_line(js, err.je_col, err.je_text);
	if (passes(js, obj))
		st = print_fields(js, obj);
	json_decref(obj);
	return st;
}

static int run(struct jsel *js)
{
	FILE *f = strcmp(js->js_file, "-") ? fopen(js->js_file, "r") : stdin;
	char *line = NULL;
	size_t cap = 0;
	int st = 0;

	if (!f) {
		fprintf(stderr, "pc-jsel: '%s': %s\n", js->js_file, strerror(errno));
		return 2;
	}
	while (!st && getline(&line, &cap, f) >= 0) {
		js->js_line++;
		st = one_line(js, line);
	}
	if (!st && ferror(f)) {
		fprintf(stderr, "pc-jsel: '%s': read error\n", js->js_file);
		st = 2;
	}
	free(line);
	if (f != stdin)
		fclose(f);
	if (fflush(stdout) && !st) {
		fprintf(stderr, "pc-jsel: stdout: %s\n", strerror(errno));
		st = 2;
	}
	return st;
}

static int add_test(struct jsel *js, char kind, char *arg)
{
	struct test *t = &js->js_test[js->js_ntest];
	char *eq = strchr(arg, '=');

	if (js->js_ntest == JS_MAX)
		return usage("too many tests");
	if (kind != 't') {
		if (!eq || eq == arg)
			return usage("-w and -W take KEY=VALUE");
		*eq = '\0';
		t->t_value = eq + 1;
	} else if (!*arg) {
		return usage("-t takes a KEY");
	}
	t->t_kind = kind;
	t->t_key = arg;
	js->js_ntest++;
	return 0;
}

int main(int argc, char **argv)
{
	struct jsel js = { .js_sep = "\t" };
	int c;

	while ((c = getopt(argc, argv, "+w:W:t:d:")) != -1) {
		if (c == 'd')
			js.js_sep = optarg;
		else if (c == 'w' || c == 'W' || c == 't') {
			if (add_test(&js, (char)c, optarg))
				return 2;
		} else
			return usage("unknown option");
	}
	if (argc - optind < 2)
		return usage("a FIELD and a FILE are needed");
	if (argc - optind - 1 > JS_MAX)
		return usage("too many fields");
	for (; optind < argc - 1; optind++)
		js.js_field[js.js_nfield++] = argv[optind];
	js.js_file = argv[argc - 1];
	return run(&js);
}
