/*
 * site.c — the site set: growth, ordering, de-duplication, globbing.
 */
#include <errno.h>
#include <fnmatch.h>
#include <stdlib.h>
#include <string.h>
#include "log.h"
#include "site.h"

struct site *site_set_add(struct site_set *ss)
{
	if (ss->ss_n == ss->ss_cap) {
		size_t cap = ss->ss_cap ? ss->ss_cap * 2 : 16;
		struct site *v = realloc(ss->ss_v, cap * sizeof(*v));

		if (!v)
			return NULL;
		ss->ss_v = v;
		ss->ss_cap = cap;
	}
	memset(&ss->ss_v[ss->ss_n], 0, sizeof(ss->ss_v[0]));
	return &ss->ss_v[ss->ss_n++];
}

static void site_free(struct site *st)
{
	free(st->st_path);
	free(st->st_open_path);
	free(st->st_provider);
	free(st->st_name);
	free(st->st_args);
}

void site_set_free(struct site_set *ss)
{
	for (size_t i = 0; i < ss->ss_n; i++)
		site_free(&ss->ss_v[i]);
	free(ss->ss_v);
	memset(ss, 0, sizeof(*ss));
}

static int site_cmp(const void *a, const void *b)
{
	const struct site *x = a, *y = b;
	int r;

	if ((r = strcmp(x->st_path, y->st_path)))
		return r;
	if (x->st_pid != y->st_pid)
		return x->st_pid < y->st_pid ? -1 : 1;
	if ((r = strcmp(x->st_provider, y->st_provider)))
		return r;
	if ((r = strcmp(x->st_name, y->st_name)))
		return r;
	if (x->st_pc != y->st_pc)
		return x->st_pc < y->st_pc ? -1 : 1;
	return x->st_retprobe - y->st_retprobe;
}

/* Two PROBE arguments may match the same site; attach it once. */
void site_set_sort(struct site_set *ss)
{
	size_t w = 0;

	if (!ss->ss_n)
		return;
	qsort(ss->ss_v, ss->ss_n, sizeof(ss->ss_v[0]), site_cmp);
	for (size_t r = 1; r < ss->ss_n; r++) {
		if (!site_cmp(&ss->ss_v[w], &ss->ss_v[r])) {
			site_free(&ss->ss_v[r]);
			continue;
		}
		ss->ss_v[++w] = ss->ss_v[r];
	}
	ss->ss_n = w + 1;
}

/* One file as the kernel keys uprobes (site.h: st_kdev, st_ino, the real
 * file under overlayfs), or by path where a site's identity is unknown. */
static int same_file(const struct site *a, const struct site *b)
{
	if (a->st_ino && b->st_ino)
		return a->st_kdev == b->st_kdev && a->st_ino == b->st_ino;
	return !strcmp(a->st_open_path, b->st_open_path);
}

static void site_drop(struct site_set *ss, size_t j)
{
	struct site *st = &ss->ss_v[j];

	site_free(st);
	memmove(st, st + 1, (ss->ss_n - j - 1) * sizeof(*st));
	ss->ss_n--;
}

void site_set_drop_same(struct site_set *ss, size_t first)
{
	for (size_t j = first; j < ss->ss_n; j++) {
		const struct site *b = &ss->ss_v[j];

		for (size_t i = 0; i < j; i++) {
			const struct site *a = &ss->ss_v[i];

			if (a->st_off != b->st_off ||
			    a->st_retprobe != b->st_retprobe ||
			    strcmp(a->st_provider, b->st_provider) ||
			    strcmp(a->st_name, b->st_name) || !same_file(a, b))
				continue;
			pc_dbg("site %s:%s '%s' 0x%llx: the same file as '%s' "
			       "(device 0x%llx, inode %llu): attached once",
			       b->st_provider, b->st_name, b->st_open_path,
			       (unsigned long long)b->st_off, a->st_open_path,
			       (unsigned long long)b->st_kdev,
			       (unsigned long long)b->st_ino);
			site_drop(ss, j--);
			break;
		}
	}
}

int site_glob(const char *pattern, const char *s)
{
	return fnmatch(pattern, s, 0) == 0;
}
