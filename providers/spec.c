/*
 * spec.c — x86-64 USDT argument specs.
 *
 * <sys/sdt.h> has the compiler print every probe argument as an asm operand
 * (constraint "nor") and stores the text, prefixed by its size, in the note.
 * What gcc 12 and clang 14 actually write (readelf -n):
 *
 *   gcc -O2 -pie:     -4@g(%rip) -8@(%rax,%r8,8) -8@8+gs(%rip) 8@%r9
 *   gcc -O2 -no-pie:  -8@arr(,%rdi,8) -4@iarr+4(,%rsi,4) -1@carr(%rdi)
 *   gcc -O0:          -4@%eax -1@-8(%rbp) 8f@-24(%rbp)
 *   constants:        -8@$-1 8@$-1 -1@$-3
 *   clang -O2:        -4@-68(%rsp) 8f@-56(%rsp)
 *
 * Grammar accepted (AT&T syntax):
 *
 *   operand := [ ['-'] size ['f'] '@' ] ( '%' reg | '$' num | mem )
 *   mem     := [disp] '(' [base] [ ',' index [ ',' scale ] ] ')'  |  disp
 *   disp    := num | sym | sym ('+'|'-') digits | num '+' sym
 *   num     := ['-'|'+'] (decimal | 0x hex), any value in [-2^63, 2^64)
 *
 * '-' means signed; 'f' (floating point) cannot be fetched from the
 * general registers the BPF side sees, so it is reported.  V1/V2 notes omit
 * "size@": a register then has its own width, anything else 8 bytes, and
 * both are unsigned.  A register narrower than the declared size gives its
 * width (gcc never writes that, hand-written notes might).
 *
 * Each operand becomes a struct pc_arg (pc_bpf.h) that the BPF program
 * evaluates at the breakpoint.  An operand it cannot read becomes
 * PC_ARG_BAD with a reason: reported, never guessed.
 *
 * Link-time addresses (sym(%rip), arr(,%rdi,8), carr(%rdi), a bare sym) are
 * stored relative to the probe's link-time pc with pa_ip_rel set; the BPF
 * side adds the runtime pc, so the load bias cancels out.  A numeric
 * off(%rip) is taken relative to the probe site too: an operand in a note
 * belongs to no instruction, so there is no "next instruction" for %rip to
 * point at (compilers write sym(%rip); only hand-written notes have this).
 */
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include "spec.h"

/*
 * Byte offsets in the KERNEL's struct pt_regs on x86-64
 * (arch/x86/include/asm/ptrace.h): that is what a uprobe BPF program reads,
 * and the only table of offsets in probecheck.  Written out rather than
 * taken from a userspace header: <sys/user.h>'s user_regs_struct is the
 * ptrace ABI (its own names, fs_base/gs_base and segment slots after ss, and
 * no promise to track the kernel's layout), <sys/reg.h> counts 8-byte
 * words, and the instruction-encoding order (ax cx dx bx sp bp si di) and
 * DWARF numbering (ax dx cx bx si di bp sp) are different orders again.
 * The unit test checks this table against the running kernel's BTF.
 */
enum spec_pt_regs_off {
	PT_R15 = 0, PT_R14 = 8, PT_R13 = 16, PT_R12 = 24,
	PT_BP = 32, PT_BX = 40, PT_R11 = 48, PT_R10 = 56,
	PT_R9 = 64, PT_R8 = 72, PT_AX = 80, PT_CX = 88,
	PT_DX = 96, PT_SI = 104, PT_DI = 112, PT_ORIG_AX = 120,
	PT_IP = 128, PT_CS = 136, PT_FLAGS = 144, PT_SP = 152, PT_SS = 160,
};

struct spec_reg {
	const char *sr_name;
	short       sr_off;
	unsigned char sr_size;
	unsigned char sr_shift;         /* 8: %ah %bh %ch %dh */
};

#define SPEC_GPR(off, q, d, w, b) \
	{ q, off, 8, 0 }, { d, off, 4, 0 }, { w, off, 2, 0 }, { b, off, 1, 0 }
#define SPEC_RN(n) \
	SPEC_GPR(PT_R##n, "r" #n, "r" #n "d", "r" #n "w", "r" #n "b"), \
	{ "r" #n "l", PT_R##n, 1, 0 }

static const struct spec_reg spec_regs[] = {
	SPEC_GPR(PT_AX, "rax", "eax", "ax", "al"), { "ah", PT_AX, 1, 8 },
	SPEC_GPR(PT_BX, "rbx", "ebx", "bx", "bl"), { "bh", PT_BX, 1, 8 },
	SPEC_GPR(PT_CX, "rcx", "ecx", "cx", "cl"), { "ch", PT_CX, 1, 8 },
	SPEC_GPR(PT_DX, "rdx", "edx", "dx", "dl"), { "dh", PT_DX, 1, 8 },
	SPEC_GPR(PT_SI, "rsi", "esi", "si", "sil"),
	SPEC_GPR(PT_DI, "rdi", "edi", "di", "dil"),
	SPEC_GPR(PT_BP, "rbp", "ebp", "bp", "bpl"),
	SPEC_GPR(PT_SP, "rsp", "esp", "sp", "spl"),
	SPEC_RN(8), SPEC_RN(9), SPEC_RN(10), SPEC_RN(11),
	SPEC_RN(12), SPEC_RN(13), SPEC_RN(14), SPEC_RN(15),
};

/* Real registers refused as operands: not in pt_regs (vector, x87, mask,
 * control, debug), or no argument value (segments; %rip is only a base). */
static const char *const spec_unsupported[] = {
	"xmm", "ymm", "zmm", "st", "mm", "k", "cr", "dr", "tmm",
	"cs", "ds", "es", "fs", "gs", "ss", "rip", "eip", "ip",
};

int spec_reg_lookup(const char *name, int *size, int *shift)
{
	size_t i;

	for (i = 0; name && i < sizeof(spec_regs) / sizeof(spec_regs[0]); i++) {
		if (strcasecmp(name, spec_regs[i].sr_name))
			continue;
		if (size)
			*size = spec_regs[i].sr_size;
		if (shift)
			*shift = spec_regs[i].sr_shift;
		return spec_regs[i].sr_off;
	}
	return -1;
}

/* Parsing state of one operand. */
struct spec_cur {
	const char *sc_op;      /* the whole operand, for messages */
	const char *sc_p;       /* next character */
	uint64_t    sc_pc;
	spec_sym_fn sc_sym;
	void       *sc_symctx;
	char       *sc_why;
	size_t      sc_whylen;
};

/* A displacement: numeric, or a link-time address relative to pc. */
struct spec_disp {
	uint64_t sd_val;
	int      sd_sym;        /* sd_val is sym + off - pc */
	int      sd_present;
};

/* "..." when @s is longer than the @n characters a message quotes. */
#define SPEC_ELL(s, n) (strnlen((s), (n) + 1) > (n) ? "..." : "")

static int __attribute__((format(printf, 2, 3)))
spec_bad(struct spec_cur *c, const char *fmt, ...)
{
	va_list ap;

	if (c->sc_why && c->sc_whylen) {
		va_start(ap, fmt);
		vsnprintf(c->sc_why, c->sc_whylen, fmt, ap);
		va_end(ap);
	}
	return -EINVAL;
}

/* Names what was expected and where; "found the end" beats quoting ''. */
static int spec_expected(struct spec_cur *c, const char *what)
{
	if (!*c->sc_p)
		return spec_bad(c, "expected %s, found the end", what);
	return spec_bad(c, "expected %s at '%.40s%s'", what, c->sc_p, SPEC_ELL(c->sc_p, 40));
}

/* unsigned char: the <ctype.h> tests want a byte's value, never a
 * negative char, and callers pass *p as it is. */
static int spec_sym_first(unsigned char ch)
{
	return isalpha(ch) || ch == '_' || ch == '.';
}

static int spec_sym_char(unsigned char ch)
{
	return isalnum(ch) || ch == '_' || ch == '.' || ch == '$';
}

static int spec_digit(int ch, int base)
{
	if (ch >= '0' && ch <= '9')
		return ch - '0';
	if (base == 16 && ch >= 'a' && ch <= 'f')
		return ch - 'a' + 10;
	if (base == 16 && ch >= 'A' && ch <= 'F')
		return ch - 'A' + 10;
	return -1;
}

/*
 * ['-'|'+'] (decimal | 0x hex) into @v modulo 2^64.  Any value in
 * [-2^63, 2^64) is taken: "$-1" and "$18446744073709551615" are both
 * all-ones, the BPF side applies size and sign.  Leading zeros are decimal:
 * compilers never write octal.
 */
static int spec_num(struct spec_cur *c, uint64_t *v)
{
	const char *p = c->sc_p, *start = c->sc_p;
	uint64_t mag = 0;
	int neg = 0, base = 10, nd = 0, d;

	if (*p == '-' || *p == '+')
		neg = *p++ == '-';
	if (p[0] == '0' && (p[1] == 'x' || p[1] == 'X') && isxdigit((unsigned char)p[2])) {
		base = 16;
		p += 2;
	}
	for (; (d = spec_digit(*p, base)) >= 0; p++, nd++) {
		if (mag > (UINT64_MAX - d) / base)
			return spec_bad(c, "number '%.40s%s' out of 64-bit range",
					start, SPEC_ELL(start, 40));
		mag = mag * base + d;
	}
	if (!nd) {
		c->sc_p = p;
		return spec_expected(c, "a number");
	}
	if (neg && mag > (1ULL << 63))
		return spec_bad(c, "number '%.40s%s' out of 64-bit range",
				start, SPEC_ELL(start, 40));
	*v = neg ? -mag : mag;
	c->sc_p = p;
	return 0;
}

/* Resolve sym[+-off] to (sym + off - pc). */
static int spec_sym_resolve(struct spec_cur *c, const char *name, size_t len,
			    uint64_t off, uint64_t *v)
{
	uint64_t addr = 0;
	char *copy;
	int err;

	if (!c->sc_sym)
		return spec_bad(c, "no symbol table to resolve '%.*s%s'",
				(int)(len > 64 ? 64 : len), name, len > 64 ? "..." : "");
	copy = strndup(name, len);
	if (!copy) {
		spec_bad(c, "out of memory");
		return -ENOMEM;
	}
	err = c->sc_sym(c->sc_symctx, copy, &addr);
	if (err)
		err = spec_bad(c, "unknown symbol '%.64s%s'", copy, SPEC_ELL(copy, 64));
	else
		*v = addr + off - c->sc_pc;
	free(copy);
	return err;
}

/* disp := num | sym | sym ('+'|'-') digits | num '+' sym */
static int spec_disp(struct spec_cur *c, struct spec_disp *d)
{
	const char *p = c->sc_p, *name = NULL;
	uint64_t off = 0;
	size_t len = 0;
	int err, sub;

	d->sd_val = 0;
	d->sd_sym = 0;
	d->sd_present = 0;
	if (*p == '-' || *p == '+' || isdigit((unsigned char)*p)) {
		err = spec_num(c, &off);
		if (err)
			return err;
		d->sd_present = 1;
		p = c->sc_p;
		if (*p != '+' || !spec_sym_first(p[1])) {
			d->sd_val = off;
			return 0;
		}
		name = ++p;
		while (spec_sym_char(*p))
			p++;
		len = p - name;
	} else if (spec_sym_first(*p)) {
		d->sd_present = 1;
		name = p;
		while (spec_sym_char(*p))
			p++;
		len = p - name;
		if (*p == '+' || *p == '-') {
			sub = *p++ == '-';
			if (!isdigit((unsigned char)*p))
				return spec_bad(c, "unsupported expression '%.40s%s'",
						c->sc_p, SPEC_ELL(c->sc_p, 40));
			c->sc_p = p;
			err = spec_num(c, &off);
			if (err)
				return err;
			p = c->sc_p;
			if (sub)
				off = -off;
		}
	} else {
		return 0;
	}
	c->sc_p = p;
	d->sd_sym = 1;
	return spec_sym_resolve(c, name, len, off, &d->sd_val);
}

/* '%' name: fills offset, width and shift; %rip gives PT_IP (callers decide). */
static int spec_reg(struct spec_cur *c, int *off, int *size, int *shift)
{
	const char *p = c->sc_p + 1, *name = p;
	char buf[8];
	size_t len, i;

	while (isalnum((unsigned char)*p))
		p++;
	len = p - name;
	if (*p == ':')
		return spec_bad(c, "unsupported segment-prefixed operand '%.40s%s'",
				c->sc_p, SPEC_ELL(c->sc_p, 40));
	if (len && len < sizeof(buf)) {
		memcpy(buf, name, len);
		buf[len] = '\0';
		if (!strcasecmp(buf, "rip")) {
			*off = PT_IP;
			*size = 8;
			*shift = 0;
			c->sc_p = p;
			return 0;
		}
		*off = spec_reg_lookup(buf, size, shift);
		if (*off >= 0) {
			c->sc_p = p;
			return 0;
		}
	}
	for (i = 0; len && i < sizeof(spec_unsupported) / sizeof(spec_unsupported[0]); i++)
		if (!strncasecmp(name, spec_unsupported[i], strlen(spec_unsupported[i])))
			return spec_bad(c, "unsupported register '%%%.*s%s'",
					(int)(len > 32 ? 32 : len), name, len > 32 ? "..." : "");
	return spec_bad(c, "unknown register '%%%.*s%s'",
			(int)(len > 32 ? 32 : len), name, len > 32 ? "..." : "");
}

/* Size-less operands arrive with pa_size 8, so they get the register width. */
static int spec_operand_reg(struct spec_cur *c, struct pc_arg *arg)
{
	int off, size, shift, err;

	err = spec_reg(c, &off, &size, &shift);
	if (err)
		return err;
	if (off == PT_IP)
		return spec_bad(c, "%%rip is only valid as a memory base");
	if (*c->sc_p)
		return spec_bad(c, "trailing characters '%.40s%s'",
				c->sc_p, SPEC_ELL(c->sc_p, 40));
	if (size < arg->pa_size)
		arg->pa_size = size;
	arg->pa_kind = PC_ARG_REG;
	arg->pa_reg_off = off;
	arg->pa_reg_shift = shift;
	return 0;
}

static int spec_operand_const(struct spec_cur *c, struct pc_arg *arg)
{
	uint64_t v;
	int err;

	c->sc_p++;
	if (spec_sym_first(*c->sc_p))
		return spec_bad(c, "unsupported symbolic immediate '$%.40s%s'",
				c->sc_p, SPEC_ELL(c->sc_p, 40));
	err = spec_num(c, &v);
	if (err)
		return err;
	if (*c->sc_p)
		return spec_bad(c, "trailing characters '%.40s%s'",
				c->sc_p, SPEC_ELL(c->sc_p, 40));
	arg->pa_kind = PC_ARG_CONST;
	arg->pa_val = (__s64)v;
	return 0;
}

/* Address register: 64-bit GPR or %rip (base only). */
static int spec_addr_reg(struct spec_cur *c, int *off, int is_index)
{
	const char *name = c->sc_p;
	int size, shift, err;

	err = spec_reg(c, off, &size, &shift);
	if (err)
		return err;
	if (size != 8)
		return spec_bad(c, "unsupported %d-bit address register '%.*s'",
				size * 8, (int)(c->sc_p - name), name);
	if (is_index && *off == PT_IP)
		return spec_bad(c, "%%rip as an index");
	if (is_index && *off == PT_SP)
		return spec_bad(c, "%%rsp cannot be an index");
	return 0;
}

/* mem := [disp] '(' [base] [',' index [',' scale]] ')' | disp */
static int spec_operand_mem(struct spec_cur *c, struct pc_arg *arg)
{
	struct spec_disp d;
	int base = -1, idx = -1, scale = 1, err;

	err = spec_disp(c, &d);
	if (err)
		return err;
	if (*c->sc_p == '(') {
		c->sc_p++;
		if (*c->sc_p == '%' && (err = spec_addr_reg(c, &base, 0)))
			return err;
		if (*c->sc_p == ',') {
			c->sc_p++;
			if (*c->sc_p != '%')
				return spec_expected(c, "an index register");
			if ((err = spec_addr_reg(c, &idx, 1)))
				return err;
			if (*c->sc_p == ',') {
				c->sc_p++;
				if (!isdigit((unsigned char)c->sc_p[0]) || isdigit((unsigned char)c->sc_p[1]))
					return spec_expected(c, "a scale of 1, 2, 4 or 8");
				scale = *c->sc_p++ - '0';
			}
		}
		if (*c->sc_p != ')')
			return spec_expected(c, "')'");
		c->sc_p++;
		if (base < 0 && idx < 0)
			return spec_bad(c, "no base or index register");
	} else if (!d.sd_present) {
		return spec_bad(c, "unrecognised operand '%.40s%s'",
				c->sc_p, SPEC_ELL(c->sc_p, 40));
	}
	if (*c->sc_p)
		return spec_bad(c, "trailing characters '%.40s%s'",
				c->sc_p, SPEC_ELL(c->sc_p, 40));
	if (scale != 1 && scale != 2 && scale != 4 && scale != 8)
		return spec_bad(c, "scale %d is not 1, 2, 4 or 8", scale);
	if (base == PT_IP && idx >= 0)
		return spec_bad(c, "%%rip with an index");
	arg->pa_kind = PC_ARG_MEM;
	arg->pa_ip_rel = d.sd_sym || base == PT_IP;
	arg->pa_reg_off = base == PT_IP ? -1 : base;
	arg->pa_idx_off = idx;
	arg->pa_scale_shift = scale == 8 ? 3 : scale == 4 ? 2 : scale == 2 ? 1 : 0;
	arg->pa_val = (__s64)d.sd_val;
	return 0;
}

/*
 * [-]N[f]@ prefix.  Returns 1 and leaves sc_p alone when there is none (a
 * V1/V2 size-less operand), 0 when @arg got a valid size, or -EINVAL.
 */
static int spec_size(struct spec_cur *c, struct pc_arg *arg)
{
	const char *p = c->sc_p, *digits;
	int sign = 0, n = 0, nd = 0, fp = 0;

	if (*p == '-')
		sign = *p++ == '-';
	if (!isdigit((unsigned char)*p))
		goto sizeless;
	for (digits = p; isdigit((unsigned char)*p); p++, nd++)
		n = n > 1000 ? n : n * 10 + (*p - '0');
	if (*p == 'f')
		fp = *p++ == 'f';
	if (*p != '@')
		goto sizeless;
	c->sc_p = p + 1;
	if (n != 1 && n != 2 && n != 4 && n != 8)
		return spec_bad(c, "size '%.*s%s' is not 1, 2, 4 or 8",
				nd > 20 ? 20 : nd, digits, nd > 20 ? "..." : "");
	arg->pa_size = n;
	arg->pa_signed = sign;
	if (fp)
		return spec_bad(c, "floating-point operand");
	return 0;
sizeless:
	if (strchr(c->sc_op, '@'))
		return spec_bad(c, "malformed size in '%.40s%s'",
				c->sc_op, SPEC_ELL(c->sc_op, 40));
	return 1;
}

int spec_parse_arg(const char *op, uint64_t pc, spec_sym_fn sym, void *symctx,
		   struct pc_arg *arg, char *why, size_t whylen)
{
	struct spec_cur c = {
		.sc_op = op ? op : "", .sc_p = op ? op : "", .sc_pc = pc,
		.sc_sym = sym, .sc_symctx = symctx, .sc_why = why, .sc_whylen = whylen,
	};
	int sized, err;

	memset(arg, 0, sizeof(*arg));
	arg->pa_reg_off = -1;
	arg->pa_idx_off = -1;
	if (why && whylen)
		why[0] = '\0';
	err = spec_size(&c, arg);
	if (err < 0)
		goto bad;
	sized = !err;
	if (!sized)
		arg->pa_size = 8;
	if (!*c.sc_p)
		err = spec_bad(&c, "empty operand");
	else if (*c.sc_p == '%')
		err = spec_operand_reg(&c, arg);
	else if (*c.sc_p == '$')
		err = spec_operand_const(&c, arg);
	else
		err = spec_operand_mem(&c, arg);
	if (!err)
		return 0;
	if (!sized)
		arg->pa_size = 0;
bad:
	arg->pa_kind = PC_ARG_BAD;
	arg->pa_reg_off = -1;
	arg->pa_idx_off = -1;
	arg->pa_reg_shift = 0;
	arg->pa_scale_shift = 0;
	arg->pa_ip_rel = 0;
	arg->pa_val = 0;
	return err;
}

static int spec_is_sep(unsigned char ch)
{
	return ch == ' ' || ch == '\t';
}

static int spec_count(const char *s)
{
	int n = 0;

	while (*s) {
		while (spec_is_sep(*s))
			s++;
		if (!*s)
			break;
		n++;
		while (*s && !spec_is_sep(*s))
			s++;
	}
	return n;
}

/*
 * Writes ps_nargs and every ps_args slot (unused ones PC_ARG_NONE); the
 * other fields of @spec are the caller's.  Argument numbers in @why are
 * 0-based like @bad_mask and the CLI's --str.  Also -ENOMEM.  Nothing is
 * printed: the caller knows which probe this is and says so.
 */
int spec_parse(const char *args, uint64_t pc, spec_sym_fn sym, void *symctx,
	       struct pc_spec *spec, uint32_t *bad_mask, char *why, size_t whylen)
{
	char reason[256], *copy = NULL, *tok, *save = NULL;
	uint32_t mask = 0;
	int i, n, err = 0;

	memset(spec->ps_args, 0, sizeof(spec->ps_args));
	for (i = 0; i < PC_MAX_ARGS; i++) {
		spec->ps_args[i].pa_reg_off = -1;
		spec->ps_args[i].pa_idx_off = -1;
	}
	spec->ps_nargs = 0;
	if (why && whylen)
		why[0] = '\0';
	if (!args)
		args = "";
	n = spec_count(args);
	if (n > PC_MAX_ARGS) {
		if (why && whylen)
			snprintf(why, whylen, "%d operands, at most %d supported",
				 n, PC_MAX_ARGS);
		err = -E2BIG;
		goto out;
	}
	copy = strdup(args);
	if (!copy) {
		if (why && whylen)
			snprintf(why, whylen, "out of memory");
		err = -ENOMEM;
		goto out;
	}
	for (i = 0, tok = strtok_r(copy, " \t", &save); tok;
	     i++, tok = strtok_r(NULL, " \t", &save)) {
		err = spec_parse_arg(tok, pc, sym, symctx, &spec->ps_args[i],
				     reason, sizeof(reason));
		if (err == -ENOMEM)
			goto out;
		if (!err)
			continue;
		if (!mask && why && whylen)
			snprintf(why, whylen, "arg %d '%.64s%s': %s", i, tok,
				 SPEC_ELL(tok, 64), reason);
		mask |= 1u << i;
	}
	spec->ps_nargs = n;
	err = n;
out:
	if (bad_mask)
		*bad_mask = mask;
	free(copy);
	return err;
}
