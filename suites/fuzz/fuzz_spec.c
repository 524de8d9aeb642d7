/*
 * fuzz_spec.c — the operand-spec parser (providers/spec.c).
 *
 * Input: an argument string as a note holds it ("-4@%edi 8@-16(%rbp)"),
 * up to the first NUL; the 8 bytes after that NUL, if any, are the probe's
 * link-time pc.  The string goes through spec_parse as prov_usdt.c calls
 * it (every operand, with a symbol resolver), its first operand through
 * spec_parse_arg alone, and the whole through spec_reg_lookup.  The
 * resolver knows every name but those whose hash is a multiple of 4, so
 * both "symbol found" and "unknown symbol" are reached.
 *
 * Checked beyond memory safety: the result is 0..PC_MAX_ARGS operands or
 * -E2BIG, bad_mask names only operands that exist and are PC_ARG_BAD, a
 * good operand has a size of 1, 2, 4 or 8 and offsets inside pt_regs,
 * and the reason is a NUL-terminated string inside its buffer.
 */
#include "fuzz.h"
#include <errno.h>
#include "spec.h"

#define PT_REGS_SIZE 168        /* the kernel's struct pt_regs, x86-64 */

static int fake_sym(void *ctx, const char *name, uint64_t *addr)
{
	uint64_t h = 1469598103934665603ULL;

	(void)ctx;
	for (const char *p = name; *p; p++)
		h = (h ^ (unsigned char)*p) * 1099511628211ULL;
	if (!(h & 3))
		return -ENOENT;
	*addr = h;
	return 0;
}

static int reg_off_ok(int off, int may_be_none)
{
	return (may_be_none && off == -1) ||
	       (off >= 0 && off < PT_REGS_SIZE && off % 8 == 0);
}

static void check_arg(const struct pc_arg *a)
{
	switch (a->pa_kind) {
	case PC_ARG_CONST:
	case PC_ARG_REG:
	case PC_ARG_MEM:
		fuzz_check(a->pa_size == 1 || a->pa_size == 2 ||
			   a->pa_size == 4 || a->pa_size == 8);
		fuzz_check(a->pa_scale_shift <= 3);
		fuzz_check(reg_off_ok(a->pa_idx_off, 1));
		fuzz_check(reg_off_ok(a->pa_reg_off, a->pa_kind != PC_ARG_REG));
		fuzz_check(a->pa_reg_shift == 0 || a->pa_reg_shift == 8);
		break;
	case PC_ARG_BAD:
		fuzz_check(a->pa_reg_off == -1 && a->pa_idx_off == -1);
		break;
	default:
		fuzz_check(!"operand kind");
	}
}

static void check_why(const char *why, size_t len)
{
	fuzz_check(memchr(why, '\0', len) != NULL);
}

PC_FUZZ_TARGET(spec)
{
	char *s = fuzz_str(data, size), why[160], *sp;
	size_t len = strlen(s);
	const uint8_t *rest = data + len + (len < size);
	size_t nrest = size - len - (len < size);
	uint64_t pc = fuzz_take(&rest, &nrest, 8);
	struct pc_spec spec;
	struct pc_arg arg;
	uint32_t bad = 0;
	int n, sz, shift;

	memset(&spec, 0xa5, sizeof(spec));
	n = spec_parse(s, pc, (pc & 1) ? NULL : fake_sym, NULL, &spec, &bad,
		       why, sizeof(why));
	check_why(why, sizeof(why));
	fuzz_check(n == -E2BIG || (n >= 0 && n <= PC_MAX_ARGS));
	if (n >= 0) {
		fuzz_check(spec.ps_nargs == (uint32_t)n);
		fuzz_check(n == PC_MAX_ARGS || !(bad >> n));
		for (int i = 0; i < PC_MAX_ARGS; i++) {
			if (i >= n) {
				fuzz_check(spec.ps_args[i].pa_kind == PC_ARG_NONE);
				continue;
			}
			fuzz_check(!!(bad & (1u << i)) ==
				   (spec.ps_args[i].pa_kind == PC_ARG_BAD));
			check_arg(&spec.ps_args[i]);
		}
		fuzz_check(!bad == !why[0]);
	}

	/* The first operand alone, as spec_parse would see it. */
	sp = strpbrk(s, " \t");
	if (sp)
		*sp = '\0';
	n = spec_parse_arg(s, pc, fake_sym, NULL, &arg, why, sizeof(why));
	check_why(why, sizeof(why));
	fuzz_check(n == 0 || n == -EINVAL);
	fuzz_check((n == 0) == (arg.pa_kind != PC_ARG_BAD));
	check_arg(&arg);
	/* Tiny reason buffers truncate, never overflow. */
	spec_parse_arg(s, pc, fake_sym, NULL, &arg, why, 1);
	fuzz_check(why[0] == '\0');
	spec_parse_arg(s, pc, NULL, NULL, &arg, NULL, 0);

	n = spec_reg_lookup(s, &sz, &shift);
	fuzz_check(n == -1 || reg_off_ok(n, 0));
	free(s);
	return 0;
}
