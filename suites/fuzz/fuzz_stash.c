/*
 * fuzz_stash.c — the stash record parser (providers/stash.c).
 *
 * Input: a record's file name, a newline, then the record's text, as
 * stash_cleanup reads them from the stash directory: the name through
 * stash_name_parse, the text (NUL-terminated, as read_record leaves it)
 * through stash_record_parse with the tracer the name gives, or a fixed
 * one when the name is not a record's.  Nothing is undone: undoing an
 * item removes a tracefs uprobe_events entry, machine-wide state a fuzzer
 * must not touch.
 *
 * Checked: a name is accepted only in the exact form stash_record_write
 * gives it (printed again, it is the same string); an accepted record has
 * at least its two header lines, every item lies inside the buffer, is
 * one line, and starts with a kind's name.
 */
#include "fuzz.h"
#include <errno.h>
#include "stash.h"

PC_FUZZ_TARGET(stash)
{
	const uint8_t *nl = memchr(data, '\n', size);
	size_t nlen = nl ? (size_t)(nl - data) : size;
	char *name = fuzz_str(data, nlen), *buf, **items = NULL, canon[96];
	struct tracer_id id = { 42, 7 };
	const char *why = NULL;
	size_t n = 99, blen;
	int tmp = -1, err;

	err = stash_name_parse(name, &id, &tmp);
	fuzz_check(err == 0 || err == -EINVAL);
	fuzz_check(tmp == 0 || tmp == 1);
	if (!err) {
		snprintf(canon, sizeof(canon), "%s%d-%llu%s", tmp ? "." : "",
			 (int)id.ti_pid, id.ti_start, tmp ? ".tmp" : "");
		fuzz_check(!strcmp(canon, name));
		fuzz_check(id.ti_pid > 0);
	} else {
		id = (struct tracer_id){ 42, 7 };
	}
	free(name);

	buf = fuzz_str(nl ? nl + 1 : data + size, nl ? size - nlen - 1 : 0);
	blen = strlen(buf);
	err = stash_record_parse(buf, &id, &items, &n, &why);
	fuzz_check(err == 0 || err == -EINVAL);
	if (err) {
		fuzz_check(why && *why);
	} else {
		for (size_t i = 0; i < n; i++) {
			size_t k;

			fuzz_check(items[i] > buf && items[i] <= buf + blen);
			fuzz_check(!strchr(items[i], '\n'));
			for (k = 0; stash_kinds[k]; k++) {
				size_t kl = strlen(stash_kinds[k]->sk_name);

				if (!strncmp(items[i], stash_kinds[k]->sk_name, kl) &&
				    items[i][kl] == ' ')
					break;
			}
			fuzz_check(stash_kinds[k] != NULL);
		}
		free(items);
	}
	free(buf);
	return 0;
}
