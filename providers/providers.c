/*
 * providers.c — the list of providers, and PROBE argument parsing.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "log.h"
#include "provider.h"

extern const struct provider usdt_provider;
extern const struct provider pid_provider;

const struct provider *const pc_providers[] = {
	&usdt_provider,
	&pid_provider,
	NULL,
};

const struct provider *provider_find(const char *name)
{
	for (int i = 0; pc_providers[i]; i++)
		if (!strcmp(pc_providers[i]->pv_name, name))
			return pc_providers[i];
	return NULL;
}

void probe_req_free(struct probe_req *req)
{
	free(req->pr_kind);
	free(req->pr_path);
	free(req->pr_a);
	free(req->pr_b);
	memset(req, 0, sizeof(*req));
}

void probe_reqs_free(struct probe_req *v, int n)
{
	for (int i = 0; v && i < n; i++)
		probe_req_free(&v[i]);
	free(v);
}

/*
 * kind:PATH:A:B.  PATH cannot hold ':' (neither can the note's provider or
 * name), so exactly four non-empty fields are required.
 */
int probe_req_parse(const char *text, struct probe_req *req)
{
	char *f[4] = { 0 };
	const char *p = text, *c;
	int n = 0;

	memset(req, 0, sizeof(*req));
	req->pr_text = text;
	while (n < 4) {
		c = n < 3 ? strchr(p, ':') : p + strlen(p);
		if (!c)
			break;
		f[n] = strndup(p, c - p);
		if (!f[n])
			goto nomem;
		n++;
		if (!*c)
			break;
		p = c + 1;
	}
	if (n != 4 || strchr(f[3], ':')) {
		pc_err("probe '%s': expected KIND:PATH:PROVIDER:NAME", text);
		goto inval;
	}
	for (int i = 0; i < 4; i++) {
		if (!*f[i]) {
			pc_err("probe '%s': field %d is empty", text, i + 1);
			goto inval;
		}
	}
	if (!provider_find(f[0])) {
		pc_err("probe '%s': unknown probe kind '%s'", text, f[0]);
		goto inval;
	}
	req->pr_kind = f[0];
	req->pr_path = f[1];
	req->pr_a = f[2];
	req->pr_b = f[3];
	return 0;
nomem:
	for (int i = 0; i < 4; i++)
		free(f[i]);
	return -ENOMEM;
inval:
	for (int i = 0; i < 4; i++)
		free(f[i]);
	return -EINVAL;
}
