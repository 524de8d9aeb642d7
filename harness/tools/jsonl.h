/*
 * jsonl.h — the JSON-lines reader of the test tools (oraclecmp, notecmp):
 * one JSON object per line, read by libjansson, numbers kept as text.
 * Why the numbers are kept apart, and how: jsonl.c.
 */
#ifndef PC_JSONL_H
#define PC_JSONL_H

#include <stddef.h>
#include <jansson.h>

/* Why a line was refused: the column (1-based, in the line as given) and
 * the reason, e.g. "integer 18446744073709551616 above the unsigned 64-bit
 * range" or jansson's own "'}' expected near end of file". */
struct jsonl_err {
	long je_col;
	char je_text[200];
};

/*
 * Parse @line (NUL-terminated; a trailing newline is fine): exactly one
 * JSON object, nothing after it but blanks.  Returns the object (the
 * caller json_decref()s it), or NULL with @err filled (also on ENOMEM).
 * Values are jansson's, except numbers and strings: ask them with the
 * functions below, never with json_string_value()/json_integer_value().
 */
json_t *jsonl_parse(const char *line, struct jsonl_err *err);

/* Member @key of @obj (an object from jsonl_parse), or NULL. */
json_t *jsonl_get(const json_t *obj, const char *key);

/* A member's key as the line spells it (decoded), from the key
 * json_object_foreach() gives for an object of jsonl_parse. */
const char *jsonl_key(const char *key);

/* A string value: its decoded bytes (NUL-terminated; *len, if not NULL,
 * counts them, NULs inside included), or NULL if @v is not a string. */
const char *jsonl_string(const json_t *v, size_t *len);

/* A number value: its canonical text, or NULL if @v is not a number.
 * Integers (within int64 or uint64, checked) are plain decimal, "-0" is
 * "0"; a number with a fraction or an exponent is kept as written. */
const char *jsonl_number(const json_t *v);

/* @v is a number without fraction or exponent. */
int jsonl_is_integer(const json_t *v);

#endif
