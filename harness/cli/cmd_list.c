/*
 * cmd_list.c — `probecheck list`: one line per probe site.
 */
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "cli.h"
#include "log.h"
#include "procmaps.h"
#include "provider.h"

static void print_hex_or_null(const char *key, uint64_t v, int have)
{
	if (have)
		printf(",\"%s\":\"0x%llx\"", key, (unsigned long long)v);
	else
		printf(",\"%s\":null", key);
}

static void print_site_json(const struct site *st)
{
	printf("{\"provider\":");
	json_str(stdout, st->st_provider);
	printf(",\"name\":");
	json_str(stdout, st->st_name);
	printf(",\"path\":");
	json_str(stdout, st->st_path);
	printf(",\"pc\":\"0x%llx\",\"base\":\"0x%llx\"",
	       (unsigned long long)st->st_note_pc,
	       (unsigned long long)st->st_note_base);
	print_hex_or_null("semaphore", st->st_note_sema, st->st_note_sema != 0);
	printf(",\"args\":");
	json_str(stdout, st->st_args);
	if (st->st_pid) {
		printf(",\"pid\":%d", st->st_pid);
		print_hex_or_null("addr", st->st_pc + st->st_bias, 1);
		print_hex_or_null("sema_addr", st->st_sema_vaddr + st->st_bias,
				  st->st_sema_vaddr != 0);
	}
	printf("}\n");
}

static void print_site_text(const struct site *st)
{
	printf("%s %s:%s pc=0x%llx base=0x%llx", st->st_path, st->st_provider,
	       st->st_name, (unsigned long long)st->st_note_pc,
	       (unsigned long long)st->st_note_base);
	if (st->st_note_sema)
		printf(" sema=0x%llx", (unsigned long long)st->st_note_sema);
	else
		printf(" sema=-");
	if (st->st_pid)
		printf(" pid=%d addr=0x%llx", st->st_pid,
		       (unsigned long long)(st->st_pc + st->st_bias));
	printf(" args='%s'\n", st->st_args);
}

/* Every object of @pid; objects without notes are not candidates. */
/* Sites of one object, of every provider `list` shows. */
static int list_object(const char *path, const char *shown, int quiet,
		       struct site_set *ss)
{
	int err = 0, n = 0;

	for (size_t i = 0; pc_providers[i] && err >= 0; i++) {
		if (!pc_providers[i]->pv_listed)
			continue;
		err = pc_providers[i]->pv_list(path, shown, quiet, ss);
		n += err > 0 ? err : 0;
	}
	return err < 0 ? err : n;
}

static int list_process(pid_t pid, struct site_set *ss)
{
	struct pm_objects maps = { 0 };
	int err;

	err = procmaps_read(pid, 0, &maps);
	if (err)
		return err;
	for (size_t i = 0; i < maps.po_n; i++) {
		const struct pm_object *po = &maps.po_v[i];
		size_t first = ss->ss_n;

		err = list_object(po->po_open_path, po->po_path, 1, ss);
		if (err == -ENOMEM)
			break;
		for (size_t j = first; j < ss->ss_n; j++) {
			ss->ss_v[j].st_pid = pid;
			ss->ss_v[j].st_bias = po->po_bias;
		}
		err = 0;
	}
	procmaps_free(&maps);
	return err;
}

static int list_file(const char *path, struct site_set *ss)
{
	struct stat sb;

	if (stat(path, &sb)) {
		int err = errno;

		pc_err("usdt: '%s': %s", path, pc_strerror(err));
		return -err;
	}
	if (!S_ISREG(sb.st_mode)) {
		pc_err("usdt: '%s': not a regular file", path);
		return -EINVAL;
	}
	return list_object(path, path, 0, ss);
}

int cmd_list(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "pid", required_argument, NULL, 'p' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 }
	};
	struct site_set ss = { 0 };
	int json = 0, c, err, at;
	pid_t pid = 0;

	/* 0, not 1: all of getopt's state.  A parse that stopped inside a
	 * cluster ("-Zp1") would resume there, in an argv that is gone. */
	optind = 0;
	opterr = 0;     /* our own messages, with the probecheck: prefix */
	while ((at = GETOPT_AT(), c = getopt_long(argc, argv, "+:jp:h", opts, NULL)) != -1) {
		switch (c) {
		case 'j': json = 1; break;
		case 'p':
			if (parse_pid(optarg, &pid))
				return EXIT_USAGE;
			break;
		case 'h': usage(stdout); return EXIT_OK;
		default:
			bad_option("list", c, argv, at);
			usage(stderr);
			return EXIT_USAGE;
		}
	}
	if ((pid && optind != argc) || (!pid && optind != argc - 1)) {
		pc_err("list: give exactly one FILE or -p PID");
		usage(stderr);
		return EXIT_USAGE;
	}
	err = pid ? list_process(pid, &ss) : list_file(argv[optind], &ss);
	if (err < 0) {
		site_set_free(&ss);
		return err == -ENOMEM ? EXIT_RUNTIME : EXIT_USAGE;
	}
	for (size_t i = 0; i < ss.ss_n; i++)
		(json ? print_site_json : print_site_text)(&ss.ss_v[i]);
	site_set_free(&ss);
	return EXIT_OK;
}
