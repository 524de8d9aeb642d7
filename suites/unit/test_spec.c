/*
 * test_spec.c — x86-64 USDT operand parser (providers/spec.c).
 *
 * The expected pt_regs offsets below are written out independently of
 * spec.c and are also checked against the running kernel's BTF, so a wrong
 * table in either place fails.  Operand strings marked "gcc" are copied from
 * `readelf -n` of gcc 12 output (-O0, -O2 -pie, -O2 -no-pie).
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/btf.h>
#include "unit.h"
#include "spec.h"

#define PC 0x401000ULL

struct fake_sym {
	const char *fs_name;
	uint64_t    fs_addr;
};

static const struct fake_sym fake_syms[] = {
	{ "sym", 0x404000 },
	{ "arr", 0x405040 },
	{ "iarr", 0x405100 },
	{ "carr", 0x405200 },
	{ "g", 0x406010 },
	{ "gs", 0x406020 },
	{ "lo", 0x400000 },             /* below PC: negative pa_val */
	{ "_ZN3foo3barE", 0x407000 },
	{ "sym.isra.0", 0x408000 },
};

static int fake_lookups;

static int fake_sym_fn(void *ctx, const char *name, uint64_t *addr)
{
	size_t i;

	fake_lookups++;
	if (ctx != (void *)fake_syms)
		return -EFAULT;         /* symctx must be passed through */
	for (i = 0; i < sizeof(fake_syms) / sizeof(fake_syms[0]); i++) {
		if (!strcmp(name, fake_syms[i].fs_name)) {
			*addr = fake_syms[i].fs_addr;
			return 0;
		}
	}
	return -ENOENT;
}

/* Kernel struct pt_regs, x86-64. */
enum { R15 = 0, R14 = 8, R13 = 16, R12 = 24, BP = 32, BX = 40, R11 = 48,
       R10 = 56, R9 = 64, R8 = 72, AX = 80, CX = 88, DX = 96, SI = 104,
       DI = 112, SP = 152, NO = -1 };

struct reg_case {
	const char *rc_name;
	int rc_off, rc_size, rc_shift;
};

static const struct reg_case reg_cases[] = {
	{ "rax", AX, 8, 0 }, { "eax", AX, 4, 0 }, { "ax", AX, 2, 0 }, { "al", AX, 1, 0 }, { "ah", AX, 1, 8 },
	{ "rbx", BX, 8, 0 }, { "ebx", BX, 4, 0 }, { "bx", BX, 2, 0 }, { "bl", BX, 1, 0 }, { "bh", BX, 1, 8 },
	{ "rcx", CX, 8, 0 }, { "ecx", CX, 4, 0 }, { "cx", CX, 2, 0 }, { "cl", CX, 1, 0 }, { "ch", CX, 1, 8 },
	{ "rdx", DX, 8, 0 }, { "edx", DX, 4, 0 }, { "dx", DX, 2, 0 }, { "dl", DX, 1, 0 }, { "dh", DX, 1, 8 },
	{ "rsi", SI, 8, 0 }, { "esi", SI, 4, 0 }, { "si", SI, 2, 0 }, { "sil", SI, 1, 0 },
	{ "rdi", DI, 8, 0 }, { "edi", DI, 4, 0 }, { "di", DI, 2, 0 }, { "dil", DI, 1, 0 },
	{ "rbp", BP, 8, 0 }, { "ebp", BP, 4, 0 }, { "bp", BP, 2, 0 }, { "bpl", BP, 1, 0 },
	{ "rsp", SP, 8, 0 }, { "esp", SP, 4, 0 }, { "sp", SP, 2, 0 }, { "spl", SP, 1, 0 },
	{ "r8", R8, 8, 0 }, { "r8d", R8, 4, 0 }, { "r8w", R8, 2, 0 }, { "r8b", R8, 1, 0 }, { "r8l", R8, 1, 0 },
	{ "r9", R9, 8, 0 }, { "r9d", R9, 4, 0 }, { "r9w", R9, 2, 0 }, { "r9b", R9, 1, 0 }, { "r9l", R9, 1, 0 },
	{ "r10", R10, 8, 0 }, { "r10d", R10, 4, 0 }, { "r10w", R10, 2, 0 }, { "r10b", R10, 1, 0 }, { "r10l", R10, 1, 0 },
	{ "r11", R11, 8, 0 }, { "r11d", R11, 4, 0 }, { "r11w", R11, 2, 0 }, { "r11b", R11, 1, 0 }, { "r11l", R11, 1, 0 },
	{ "r12", R12, 8, 0 }, { "r12d", R12, 4, 0 }, { "r12w", R12, 2, 0 }, { "r12b", R12, 1, 0 }, { "r12l", R12, 1, 0 },
	{ "r13", R13, 8, 0 }, { "r13d", R13, 4, 0 }, { "r13w", R13, 2, 0 }, { "r13b", R13, 1, 0 }, { "r13l", R13, 1, 0 },
	{ "r14", R14, 8, 0 }, { "r14d", R14, 4, 0 }, { "r14w", R14, 2, 0 }, { "r14b", R14, 1, 0 }, { "r14l", R14, 1, 0 },
	{ "r15", R15, 8, 0 }, { "r15d", R15, 4, 0 }, { "r15w", R15, 2, 0 }, { "r15b", R15, 1, 0 }, { "r15l", R15, 1, 0 },
};

/* Expected pc_arg, or a BAD with a substring of the reason. */
struct op_case {
	const char *oc_op;
	int oc_kind, oc_size, oc_signed, oc_shift, oc_reg, oc_idx, oc_scale, oc_iprel;
	uint64_t oc_val;
	const char *oc_why;
};

#define REGC(op, sz, sg, off, sh) \
	{ op, PC_ARG_REG, sz, sg, sh, off, NO, 0, 0, 0, NULL }
#define MEMC(op, sz, sg, base, idx, sc, ip, val) \
	{ op, PC_ARG_MEM, sz, sg, 0, base, idx, sc, ip, (uint64_t)(val), NULL }
#define CSTC(op, sz, sg, val) \
	{ op, PC_ARG_CONST, sz, sg, 0, NO, NO, 0, 0, (uint64_t)(val), NULL }
#define Z10 "0000000000"
#define Z100 Z10 Z10 Z10 Z10 Z10 Z10 Z10 Z10 Z10 Z10
#define Z300 Z100 Z100 Z100
#define BADC(op, sz, sg, why) \
	{ op, PC_ARG_BAD, sz, sg, 0, NO, NO, 0, 0, 0, why }

static const struct op_case op_cases[] = {
	/* registers: sign, sized vs size-less, declared wider than register */
	REGC("-4@%edi", 4, 1, DI, 0),
	REGC("4@%edi", 4, 0, DI, 0),
	REGC("%edi", 4, 0, DI, 0),
	REGC("%ah", 1, 0, AX, 8),
	REGC("-1@%ah", 1, 1, AX, 8),
	REGC("-8@%eax", 4, 1, AX, 0),
	REGC("8@%ax", 2, 0, AX, 0),
	REGC("-2@%rax", 2, 1, AX, 0),
	REGC("1@%r15", 1, 0, R15, 0),
	REGC("8@%RAX", 8, 0, AX, 0),
	REGC("-1@%dl", 1, 1, DX, 0),                    /* gcc -O2 */
	REGC("8@%r9", 8, 0, R9, 0),                     /* gcc -O2 */
	/* memory: every addressing form */
	MEMC("-4@-20(%rbp)", 4, 1, BP, NO, 0, 0, -20),
	MEMC("-1@-8(%rbp)", 1, 1, BP, NO, 0, 0, -8),    /* gcc -O0 */
	MEMC("-4@-68(%rsp)", 4, 1, SP, NO, 0, 0, -68),  /* clang -O2 */
	MEMC("8@(%rax)", 8, 0, AX, NO, 0, 0, 0),
	MEMC("8@0x18(%rax)", 8, 0, AX, NO, 0, 0, 0x18),
	MEMC("8@-0x18(%r11)", 8, 0, R11, NO, 0, 0, -0x18),
	MEMC("8@0X1f(%r11)", 8, 0, R11, NO, 0, 0, 0x1f),
	MEMC("-8@24(%rax)", 8, 1, AX, NO, 0, 0, 24),    /* gcc -O2 */
	MEMC("8@16(%rax,%rbx,2)", 8, 0, AX, BX, 1, 0, 16),
	MEMC("-8@(%rax,%r8,8)", 8, 1, AX, R8, 3, 0, 0), /* gcc -O2 */
	MEMC("8@(%rsi,%r12,4)", 8, 0, SI, R12, 2, 0, 0),
	MEMC("8@(%rsi,%r12,1)", 8, 0, SI, R12, 0, 0, 0),
	MEMC("-1@(%rcx,%rdi)", 1, 1, CX, DI, 0, 0, 0),  /* gcc -mcmodel=large */
	MEMC("8@(%rsp,%rbp)", 8, 0, SP, BP, 0, 0, 0),
	MEMC("8@(,%rbx,8)", 8, 0, NO, BX, 3, 0, 0),
	MEMC("8@-16(,%r13,2)", 8, 0, NO, R13, 1, 0, -16),
	MEMC("8@(,%r14)", 8, 0, NO, R14, 0, 0, 0),
	MEMC("8@(,%r15,8)", 8, 0, NO, R15, 3, 0, 0),     /* the index at pt_regs offset 0, no base */
	MEMC("8@4096", 8, 0, NO, NO, 0, 0, 4096),
	MEMC("8@0x7fffffffffffffff(%rax)", 8, 0, AX, NO, 0, 0, 0x7fffffffffffffffULL),
	MEMC("8@-9223372036854775808(%rax)", 8, 0, AX, NO, 0, 0, 0x8000000000000000ULL),
	MEMC("-20(%rbp)", 8, 0, BP, NO, 0, 0, -20),     /* size-less memory */
	MEMC("(%r15,%r10,4)", 8, 0, R15, R10, 2, 0, 0),
	/* symbolic displacements: link-time address relative to PC */
	MEMC("-8@arr(,%rdi,8)", 8, 1, NO, DI, 3, 1, 0x405040 - PC),       /* gcc -no-pie */
	MEMC("-4@iarr+4(,%rsi,4)", 4, 1, NO, SI, 2, 1, 0x405104 - PC),    /* gcc -no-pie */
	MEMC("-1@carr(%rdi)", 1, 1, DI, NO, 0, 1, 0x405200 - PC),         /* gcc -no-pie */
	MEMC("-8@arr+24(,%rdi,8)", 8, 1, NO, DI, 3, 1, 0x405058 - PC),    /* gcc -no-pie */
	MEMC("8@sym-0x10(%rax,%rbx,2)", 8, 0, AX, BX, 1, 1, 0x403ff0 - PC),
	MEMC("8@sym", 8, 0, NO, NO, 0, 1, 0x404000 - PC),
	MEMC("sym+8", 8, 0, NO, NO, 0, 1, 0x404008 - PC),
	MEMC("4@lo(,%rax,4)", 4, 0, NO, AX, 2, 1, 0x400000 - PC),
	/* rip-relative */
	MEMC("-4@g(%rip)", 4, 1, NO, NO, 0, 1, 0x406010 - PC),            /* gcc -pie */
	MEMC("-8@8+gs(%rip)", 8, 1, NO, NO, 0, 1, 0x406028 - PC),         /* gcc -pie */
	MEMC("-8@gs+8(%rip)", 8, 1, NO, NO, 0, 1, 0x406028 - PC),         /* gcc -no-pie */
	MEMC("8@sym-8(%rip)", 8, 0, NO, NO, 0, 1, 0x403ff8 - PC),
	MEMC("8@lo(%rip)", 8, 0, NO, NO, 0, 1, 0x400000 - PC),
	MEMC("8@_ZN3foo3barE(%rip)", 8, 0, NO, NO, 0, 1, 0x407000 - PC),
	MEMC("8@sym.isra.0(%rip)", 8, 0, NO, NO, 0, 1, 0x408000 - PC),
	MEMC("8@16(%rip)", 8, 0, NO, NO, 0, 1, 16),
	MEMC("8@-0x20(%rip)", 8, 0, NO, NO, 0, 1, -0x20),
	MEMC("2@(%rip)", 2, 0, NO, NO, 0, 1, 0),
	/* constants: raw 64-bit values, BPF applies size and sign */
	CSTC("-8@$-1", 8, 1, 0xffffffffffffffffULL),                    /* gcc */
	CSTC("8@$-1", 8, 0, 0xffffffffffffffffULL),                     /* gcc */
	CSTC("-1@$-3", 1, 1, -3),                                       /* gcc */
	CSTC("4@$-1", 4, 0, 0xffffffffffffffffULL),
	CSTC("-8@$-9223372036854775808", 8, 1, 0x8000000000000000ULL),
	CSTC("8@$9223372036854775807", 8, 0, 0x7fffffffffffffffULL),
	CSTC("8@$18446744073709551615", 8, 0, 0xffffffffffffffffULL),
	CSTC("8@$0xffffffffffffffff", 8, 0, 0xffffffffffffffffULL),
	CSTC("8@$0x8000000000000000", 8, 0, 0x8000000000000000ULL),
	CSTC("-4@$-0x10", 4, 1, -16),
	/* Hex digits of either case, their bounds each way, and the prefix. */
	CSTC("8@$0XaBcDeF", 8, 0, 0xabcdef),
	CSTC("8@$0xAf", 8, 0, 0xaf),
	MEMC("8@0X1F(%rax)", 8, 0, AX, NO, 0, 0, 0x1f),
	BADC("8@$0xG", 8, 0, "trailing characters 'xG'"),
	CSTC("2@$+7", 2, 0, 7),
	CSTC("1@$255", 1, 0, 255),
	CSTC("8@$0", 8, 0, 0),
	CSTC("4@$007", 4, 0, 7),
	CSTC("$5", 8, 0, 5),                                            /* size-less */
	CSTC("$-5", 8, 0, -5),
	/* malformed or unreadable: BAD, declared size kept when it parsed */
	BADC("", 0, 0, "empty operand"),
	BADC("@", 0, 0, "malformed size"),
	BADC("4@", 4, 0, "empty operand"),
	BADC("-4@", 4, 1, "empty operand"),
	BADC("3@%eax", 0, 0, "not 1, 2, 4 or 8"),
	BADC("0@%eax", 0, 0, "not 1, 2, 4 or 8"),
	BADC("16@%rax", 0, 0, "not 1, 2, 4 or 8"),
	BADC("99@%rax", 0, 0, "not 1, 2, 4 or 8"),
	BADC("99999999999999999999999@%rax", 0, 0, "not 1, 2, 4 or 8"),
	BADC("--4@%eax", 0, 0, "malformed size"),
	BADC("-@%eax", 0, 0, "malformed size"),
	BADC("4x@%eax", 0, 0, "malformed size"),
	BADC("x@%eax", 0, 0, "malformed size"),
	BADC("4@@%eax", 4, 0, "unrecognised operand"),
	BADC("8f@%xmm0", 8, 0, "floating-point operand"),
	BADC("8f@%rcx", 8, 0, "floating-point operand"),                /* gcc -O2 double */
	BADC("4f@-4(%rbp)", 4, 0, "floating-point operand"),
	BADC("-8f@%rax", 8, 1, "floating-point operand"),
	BADC("8f@dg(%rip)", 8, 0, "floating-point operand"),            /* gcc -O2 */
	BADC("3f@%rax", 0, 0, "not 1, 2, 4 or 8"),
	BADC("4@%foo", 4, 0, "unknown register '%foo'"),
	BADC("4@%", 4, 0, "unknown register '%'"),
	BADC("%", 0, 0, "unknown register"),
	BADC("4@%r16d", 4, 0, "unknown register '%r16d'"),
	BADC("8@%xmm1", 8, 0, "unsupported register '%xmm1'"),
	BADC("8@%ymm15", 8, 0, "unsupported register '%ymm15'"),
	BADC("8@%st", 8, 0, "unsupported register '%st'"),
	BADC("8@%st(1)", 8, 0, "unsupported register '%st'"),
	BADC("8@%mm0", 8, 0, "unsupported register '%mm0'"),
	BADC("2@%cs", 2, 0, "unsupported register '%cs'"),
	BADC("2@%fs", 2, 0, "unsupported register '%fs'"),
	/* Every other family of registers an operand cannot be read from:
	 * said as unsupported, not unknown (the last of the table too). */
	BADC("8@%zmm31", 8, 0, "unsupported register '%zmm31'"),
	BADC("8@%k1", 8, 0, "unsupported register '%k1'"),
	BADC("8@%cr3", 8, 0, "unsupported register '%cr3'"),
	BADC("8@%dr7", 8, 0, "unsupported register '%dr7'"),
	BADC("8@%tmm0", 8, 0, "unsupported register '%tmm0'"),
	BADC("2@%ds", 2, 0, "unsupported register '%ds'"),
	BADC("2@%es", 2, 0, "unsupported register '%es'"),
	BADC("2@%gs", 2, 0, "unsupported register '%gs'"),
	BADC("2@%ss", 2, 0, "unsupported register '%ss'"),
	BADC("4@%eip", 4, 0, "unsupported register '%eip'"),
	BADC("2@%ip", 2, 0, "unsupported register '%ip'"),
	BADC("8@%fs:0x28", 8, 0, "segment-prefixed operand '%fs:0x28'"),
	BADC("8@%gs:(%rax)", 8, 0, "segment-prefixed operand '%gs:(%rax)'"),
	BADC("8@%rip", 8, 0, "%rip is only valid as a memory base"),
	BADC("4@%eax junk", 4, 0, "trailing characters ' junk'"),
	BADC("4@%eax,", 4, 0, "trailing characters"),
	BADC("4@%eax%ebx", 4, 0, "trailing characters"),
	BADC("4@(%rax", 4, 0, "expected ')', found the end"),
	BADC("4@8(%rax", 4, 0, "expected ')'"),
	BADC("4@8(%rax,%rbx", 4, 0, "expected ')', found the end"),
	BADC("4@8(%rax,%rbx,8", 4, 0, "expected ')', found the end"),
	BADC("4@8(%rax%rbx)", 4, 0, "expected ')' at '%rbx)'"),
	BADC("4@8(%rax))", 4, 0, "trailing characters"),
	BADC("4@8(%rax)junk", 4, 0, "trailing characters"),
	BADC("4@8(%rax,%rbx,3)", 4, 0, "scale 3"),
	BADC("4@8(%rax,%rbx,0)", 4, 0, "scale 0"),
	BADC("4@8(%rax,%rbx,16)", 4, 0, "expected a scale"),
	BADC("4@(%rax,%rbx,)", 4, 0, "expected a scale"),
	BADC("4@(%rax,)", 4, 0, "expected an index register at ')'"),
	BADC("4@(%rax,8)", 4, 0, "expected an index register"),
	BADC("4@()", 4, 0, "no base or index"),
	BADC("4@(,)", 4, 0, "expected an index register"),
	BADC("4@(%eax)", 4, 0, "32-bit address register '%eax'"),
	BADC("4@(%rax,%esi,2)", 4, 0, "32-bit address register"),
	BADC("4@(%rax,%rsp,2)", 4, 0, "%rsp cannot be an index"),
	BADC("4@(%rip,%rax,2)", 4, 0, "%rip with an index"),
	BADC("4@sym(%rip,%rax)", 4, 0, "%rip with an index"),
	BADC("4@(%rax,%rip)", 4, 0, "%rip as an index"),
	BADC("4@(%xmm0)", 4, 0, "unsupported register '%xmm0'"),
	BADC("4@(%foo)", 4, 0, "unknown register '%foo'"),
	BADC("4@$", 4, 0, "expected a number, found the end"),
	BADC("4@$-", 4, 0, "expected a number, found the end"),
	BADC("4@$--1", 4, 0, "expected a number at '-1'"),
	BADC("4@$abc", 4, 0, "symbolic immediate '$abc'"),
	BADC("4@$1x", 4, 0, "trailing characters 'x'"),
	BADC("4@$0x", 4, 0, "trailing characters 'x'"),
	BADC("8@$18446744073709551616", 8, 0, "out of 64-bit range"),
	BADC("8@$-9223372036854775809", 8, 0, "out of 64-bit range"),
	BADC("8@$0x10000000000000000", 8, 0, "out of 64-bit range"),
	/* below -2^63 after 300 leading zeros: the message cut at 40 characters */
	BADC("8@sym+99999999999999999999999(%rip)", 8, 0, "number '99999999999999999999999(%rip)' out of 64-bit range"),
	/* Names quoted whole up to 32 characters, then cut with "...". */
	BADC("8@%qqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqq", 8, 0, "unknown register '%qqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqq'"),
	BADC("8@%qqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqq", 8, 0, "unknown register '%qqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqq...'"),
	BADC("8@%xmm11111111111111111111111111111", 8, 0, "unsupported register '%xmm11111111111111111111111111111'"),
	BADC("8@%xmm111111111111111111111111111111", 8, 0, "unsupported register '%xmm11111111111111111111111111111...'"),
	BADC("8@$-" Z300 "9223372036854775809", 8, 0, "number '-000000000000000000000000000000000000000...' out of 64-bit range"),
	BADC("8@$99999999999999999999999", 8, 0, "out of 64-bit range"),
	BADC("8@0x1ffffffffffffffff(%rax)", 8, 0, "out of 64-bit range"),
	BADC("4@nosuch(%rip)", 4, 0, "unknown symbol 'nosuch'"),
	BADC("4@nosuch", 4, 0, "unknown symbol 'nosuch'"),
	BADC("4@nosuch(,%rax,8)", 4, 0, "unknown symbol 'nosuch'"),
	BADC("4@sym+(%rip)", 4, 0, "unsupported expression"),
	BADC("4@sym+x(%rip)", 4, 0, "unsupported expression"),
	BADC("4@sym*2(%rip)", 4, 0, "trailing characters '*2(%rip)'"),
	BADC("4@8+(%rax)", 4, 0, "trailing characters"),
	BADC("4@-(%rax)", 4, 0, "expected a number"),
	/* register names are copied into an 8-byte buffer: 7 letters and 8 */
	BADC("8@%abcdefg", 8, 0, "unknown register '%abcdefg'"),
	BADC("8@%abcdefgh", 8, 0, "unknown register '%abcdefgh'"),
	BADC("4@ %eax", 4, 0, "unrecognised operand"),
	BADC("4@,%eax", 4, 0, "unrecognised operand"),
};

static void check_arg(const char *op, const struct pc_arg *a, const struct op_case *c)
{
	char what[512];

#define CHECK_FIELD(field, exp) do {						\
		snprintf(what, sizeof(what), "'%.300s' " #field, op);		\
		UNIT_EQ_INT(a->field, exp, what);				\
	} while (0)
	CHECK_FIELD(pa_kind, c->oc_kind);
	CHECK_FIELD(pa_size, c->oc_size);
	CHECK_FIELD(pa_signed, c->oc_signed);
	CHECK_FIELD(pa_reg_shift, c->oc_shift);
	CHECK_FIELD(pa_reg_off, c->oc_reg);
	CHECK_FIELD(pa_idx_off, c->oc_idx);
	CHECK_FIELD(pa_scale_shift, c->oc_scale);
	CHECK_FIELD(pa_ip_rel, c->oc_iprel);
	CHECK_FIELD(pa_val, c->oc_val);
#undef CHECK_FIELD
}

static void test_op_cases(void)
{
	char what[512], why[256];
	struct pc_arg a;
	size_t i;
	int rc;

	for (i = 0; i < sizeof(op_cases) / sizeof(op_cases[0]); i++) {
		const struct op_case *c = &op_cases[i];

		memset(&a, 0xa5, sizeof(a));
		strcpy(why, "stale");
		rc = spec_parse_arg(c->oc_op, PC, fake_sym_fn, (void *)fake_syms,
				    &a, why, sizeof(why));
		snprintf(what, sizeof(what), "'%s' returns %s", c->oc_op,
			 c->oc_why ? "-EINVAL" : "0");
		UNIT_EQ_INT(rc, c->oc_why ? -EINVAL : 0, what);
		check_arg(c->oc_op, &a, c);
		snprintf(what, sizeof(what), "'%s' reason contains \"%s\"",
			 c->oc_op, c->oc_why ? c->oc_why : "");
		if (c->oc_why) {
			UNIT_TRUE(strstr(why, c->oc_why), what);
			if (!strstr(why, c->oc_why))
				printf("#   reason was '%s'\n", why);
		} else {
			UNIT_EQ_STR(why, "", what);
		}
	}
}

static void test_registers(void)
{
	char what[128], op[32], why[256];
	struct pc_arg a;
	size_t i;
	int off, size, shift, rc;

	for (i = 0; i < sizeof(reg_cases) / sizeof(reg_cases[0]); i++) {
		const struct reg_case *r = &reg_cases[i];
		struct op_case exp = REGC(op, 0, 0, r->rc_off, r->rc_shift);

		size = shift = -1;
		off = spec_reg_lookup(r->rc_name, &size, &shift);
		snprintf(what, sizeof(what), "lookup %s offset", r->rc_name);
		UNIT_EQ_INT(off, r->rc_off, what);
		snprintf(what, sizeof(what), "lookup %s size", r->rc_name);
		UNIT_EQ_INT(size, r->rc_size, what);
		snprintf(what, sizeof(what), "lookup %s shift", r->rc_name);
		UNIT_EQ_INT(shift, r->rc_shift, what);

		/* signed, declared 8: the register's width wins when narrower */
		snprintf(op, sizeof(op), "-8@%%%s", r->rc_name);
		rc = spec_parse_arg(op, PC, NULL, NULL, &a, why, sizeof(why));
		UNIT_EQ_INT(rc, 0, op);
		exp.oc_size = r->rc_size;
		exp.oc_signed = 1;
		check_arg(op, &a, &exp);

		/* unsigned, declared 1: truncates every register */
		snprintf(op, sizeof(op), "1@%%%s", r->rc_name);
		rc = spec_parse_arg(op, PC, NULL, NULL, &a, why, sizeof(why));
		UNIT_EQ_INT(rc, 0, op);
		exp.oc_size = 1;
		exp.oc_signed = 0;
		check_arg(op, &a, &exp);

		/* size-less (V1/V2): register width, unsigned */
		snprintf(op, sizeof(op), "%%%s", r->rc_name);
		rc = spec_parse_arg(op, PC, NULL, NULL, &a, why, sizeof(why));
		UNIT_EQ_INT(rc, 0, op);
		exp.oc_size = r->rc_size;
		check_arg(op, &a, &exp);
	}
	UNIT_EQ_INT(spec_reg_lookup("R13D", &size, &shift), R13, "lookup is case-insensitive");
	UNIT_EQ_INT(spec_reg_lookup("rdi", NULL, NULL), DI, "lookup takes NULL size and shift");
	UNIT_EQ_INT(spec_reg_lookup("xmm0", &size, &shift), -1, "lookup xmm0 unknown");
	UNIT_EQ_INT(spec_reg_lookup("%rax", &size, &shift), -1, "lookup wants no '%'");
	UNIT_EQ_INT(spec_reg_lookup("", &size, &shift), -1, "lookup empty name");
	UNIT_EQ_INT(spec_reg_lookup(NULL, &size, &shift), -1, "lookup NULL name");
	UNIT_EQ_INT(spec_reg_lookup("r16", &size, &shift), -1, "lookup r16 unknown");
	UNIT_EQ_INT(spec_reg_lookup("raxx", &size, &shift), -1, "lookup raxx unknown");
}

/* The offsets are the kernel's: compare with the running kernel's BTF. */
static void test_pt_regs_btf(void)
{
	static const struct { const char *k, *reg; } map[] = {
		{ "r15", "r15" }, { "r14", "r14" }, { "r13", "r13" }, { "r12", "r12" },
		{ "bp", "rbp" }, { "bx", "rbx" }, { "r11", "r11" }, { "r10", "r10" },
		{ "r9", "r9" }, { "r8", "r8" }, { "ax", "rax" }, { "cx", "rcx" },
		{ "dx", "rdx" }, { "si", "rsi" }, { "di", "rdi" }, { "sp", "rsp" },
	};
	const struct btf_member *m;
	const struct btf_type *t;
	struct btf *btf;
	char what[128];
	size_t i, j, found = 0;
	int id;

	btf = btf__load_vmlinux_btf();
	if (!btf) {
		UNIT_TRUE(1, "pt_regs offsets match kernel BTF # SKIP no vmlinux BTF");
		return;
	}
	id = btf__find_by_name_kind(btf, "pt_regs", BTF_KIND_STRUCT);
	UNIT_TRUE(id > 0, "kernel BTF has struct pt_regs");
	t = id > 0 ? btf__type_by_id(btf, id) : NULL;
	for (j = 0; t && j < btf_vlen(t); j++) {
		m = btf_members(t) + j;
		for (i = 0; i < sizeof(map) / sizeof(map[0]); i++) {
			if (strcmp(btf__name_by_offset(btf, m->name_off), map[i].k))
				continue;
			snprintf(what, sizeof(what), "%s offset = BTF pt_regs.%s", map[i].reg, map[i].k);
			UNIT_EQ_INT(spec_reg_lookup(map[i].reg, NULL, NULL),
				    btf_member_bit_offset(t, j) / 8, what);
			found++;
		}
	}
	UNIT_EQ_INT(found, sizeof(map) / sizeof(map[0]), "every GPR found in BTF pt_regs");
	btf__free(btf);
}

static void test_no_symtab(void)
{
	char why[256];
	struct pc_arg a;
	int rc;

	rc = spec_parse_arg("8@sym(%rip)", PC, NULL, NULL, &a, why, sizeof(why));
	UNIT_EQ_INT(rc, -EINVAL, "sym(%rip) without a symbol table is -EINVAL");
	UNIT_EQ_INT(a.pa_kind, PC_ARG_BAD, "sym(%rip) without a symbol table is BAD");
	UNIT_TRUE(strstr(why, "no symbol table"), "reason says no symbol table");
	/* The symbol quoted whole up to 64 characters, then cut with "...". */
	rc = spec_parse_arg("8@ssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssss(%rip)", PC, NULL, NULL, &a, why, sizeof(why));
	UNIT_TRUE(rc == -EINVAL && strstr(why, "resolve 'ssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssss'"), "a 64-character symbol quoted whole");
	rc = spec_parse_arg("8@sssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssss(%rip)", PC, NULL, NULL, &a, why, sizeof(why));
	UNIT_TRUE(rc == -EINVAL && strstr(why, "resolve 'ssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssss...'"), "a 65-character symbol cut at 64");
	rc = spec_parse_arg("8@16(%rip)", PC, NULL, NULL, &a, why, sizeof(why));
	UNIT_EQ_INT(rc, 0, "numeric off(%rip) needs no symbol table");
	rc = spec_parse_arg("8@%fs:8", PC, NULL, NULL, &a, NULL, 0);
	UNIT_EQ_INT(rc, -EINVAL, "NULL why is allowed");
	rc = spec_parse_arg("8f@%xmm0", PC, NULL, NULL, &a, why, 8);
	UNIT_EQ_STR(why, "floatin", "why is truncated to whylen");
	rc = spec_parse_arg(NULL, PC, NULL, NULL, &a, why, sizeof(why));
	UNIT_EQ_INT(rc, -EINVAL, "NULL operand is -EINVAL");
}

static char *repeat(const char *pre, int ch, size_t n, const char *post)
{
	size_t lp = strlen(pre), lq = strlen(post);
	char *s = malloc(lp + n + lq + 1);

	if (!s)
		abort();
	memcpy(s, pre, lp);
	memset(s + lp, ch, n);
	memcpy(s + lp + n, post, lq + 1);
	return s;
}

/* Very long tokens: BAD with a bounded reason, no overrun (valgrind). */
static void test_long_tokens(void)
{
	static const struct { const char *pre; int ch; const char *post; const char *why; } longs[] = {
		{ "8@", 'a', "(%rip)", "unknown symbol" },
		{ "8@", 'a', "", "unknown symbol" },
		{ "8@%", 'a', "", "unknown register" },
		{ "8@%r", '1', "", "unknown register" },
		{ "8@$", '9', "", "out of 64-bit range" },
		{ "8@$0x", 'f', "", "out of 64-bit range" },
		{ "8@", '1', "(%rax)", "out of 64-bit range" },
		{ "8@", '(', "", "expected ')'" },
		{ "8@(%rax", ')', "", "trailing characters" },
		{ "", '4', "@%eax", "not 1, 2, 4 or 8" },
		{ "8@%eax", ' ', "x", "trailing characters" },
		{ "", '-', "4@%eax", "malformed size" },
		{ "8@(%rax,%rbx,", '8', ")", "expected a scale" },
		{ "8@sym+", '0', "(%rip)", "" },        /* sym+0: valid */
	};
	char what[128], why[128];
	struct pc_arg a;
	size_t i;
	int rc;

	for (i = 0; i < sizeof(longs) / sizeof(longs[0]); i++) {
		char *op = repeat(longs[i].pre, longs[i].ch, 70000, longs[i].post);

		memset(why, 'x', sizeof(why));
		rc = spec_parse_arg(op, PC, fake_sym_fn, (void *)fake_syms, &a, why, sizeof(why));
		snprintf(what, sizeof(what), "long '%s' x %c x '%s': %s", longs[i].pre,
			 longs[i].ch, longs[i].post, *longs[i].why ? "BAD" : "ok");
		if (*longs[i].why) {
			UNIT_TRUE(rc == -EINVAL && a.pa_kind == PC_ARG_BAD &&
				  strstr(why, longs[i].why), what);
		} else {
			UNIT_TRUE(rc == 0 && a.pa_kind == PC_ARG_MEM &&
				  a.pa_val == (int64_t)(0x404000 - PC), what);
		}
		UNIT_TRUE(memchr(why, '\0', sizeof(why)), "reason is NUL-terminated within whylen");
		free(op);
	}
}

/* rc and kind agree: 0 with a readable kind, or -EINVAL with BAD. */
static int consistent(int rc, const struct pc_arg *a)
{
	if (rc == 0)
		return a->pa_kind == PC_ARG_REG || a->pa_kind == PC_ARG_MEM ||
		       a->pa_kind == PC_ARG_CONST;
	return rc == -EINVAL && a->pa_kind == PC_ARG_BAD;
}

/*
 * Every prefix of every table operand, each in a buffer of exactly its
 * size (valgrind and ASan see any read past the NUL), then seeded random
 * operands over the operand alphabet.
 */
static void test_prefixes_and_noise(void)
{
	static const char alpha[] = "%$()@,-+:0123456789abcdefxfilprstw_. \t";
	unsigned int seed = 12345, bad = 0, n = 0;
	char why[64], *buf;
	struct pc_arg a;
	size_t i, len, k;
	int rc;

	for (i = 0; i < sizeof(op_cases) / sizeof(op_cases[0]); i++) {
		for (len = 0; len <= strlen(op_cases[i].oc_op); len++, n++) {
			buf = malloc(len + 1);
			if (!buf)
				abort();
			memcpy(buf, op_cases[i].oc_op, len);
			buf[len] = '\0';
			rc = spec_parse_arg(buf, PC, fake_sym_fn, (void *)fake_syms, &a, why, sizeof(why));
			if (!consistent(rc, &a)) {
				bad++;
				printf("#   prefix '%s': rc %d kind %d\n", buf, rc, a.pa_kind);
			}
			free(buf);
		}
	}
	for (i = 0; i < 20000; i++, n++) {
		seed = seed * 1103515245 + 12345;
		len = (seed >> 16) % 24;
		buf = malloc(len + 1);
		if (!buf)
			abort();
		for (k = 0; k < len; k++) {
			seed = seed * 1103515245 + 12345;
			buf[k] = alpha[(seed >> 16) % (sizeof(alpha) - 1)];
		}
		buf[len] = '\0';
		rc = spec_parse_arg(buf, PC, fake_sym_fn, (void *)fake_syms, &a, why, sizeof(why));
		if (!consistent(rc, &a)) {
			bad++;
			printf("#   noise '%s': rc %d kind %d\n", buf, rc, a.pa_kind);
		}
		free(buf);
	}
	UNIT_EQ_INT(bad, 0, "prefixes and random operands: 0 or -EINVAL with matching kind");
	UNIT_TRUE(n > 20000, "prefixes and random operands were run");
}

static void test_parse_whole(void)
{
	char why[512], *s;
	struct pc_spec sp;
	uint32_t mask;
	int rc, i;

	memset(&sp, 0xa5, sizeof(sp));
	sp.ps_probe_id = 7;
	rc = spec_parse("", PC, NULL, NULL, &sp, &mask, why, sizeof(why));
	UNIT_EQ_INT(rc, 0, "empty string: 0 args");
	UNIT_EQ_INT(sp.ps_nargs, 0, "empty string: ps_nargs 0");
	UNIT_EQ_INT(mask, 0, "empty string: no bad args");
	UNIT_EQ_INT(sp.ps_args[0].pa_kind, PC_ARG_NONE, "empty string: slot 0 NONE");
	UNIT_EQ_INT(sp.ps_args[11].pa_kind, PC_ARG_NONE, "empty string: slot 11 NONE");
	/* Every slot names no register (-1), never pt_regs offset 0 (r15):
	 * the BPF program gets the whole array. */
	for (i = 0; i < PC_MAX_ARGS; i++)
		if (sp.ps_args[i].pa_reg_off != -1 || sp.ps_args[i].pa_idx_off != -1)
			break;
	UNIT_EQ_INT(i, PC_MAX_ARGS, "empty string: every slot's registers -1 (none)");
	UNIT_EQ_INT(sp.ps_probe_id, 7, "ps_probe_id left to the caller");
	rc = spec_parse(" \t  ", PC, NULL, NULL, &sp, &mask, why, sizeof(why));
	UNIT_EQ_INT(rc, 0, "blanks only: 0 args");
	rc = spec_parse(NULL, PC, NULL, NULL, &sp, &mask, why, sizeof(why));
	UNIT_EQ_INT(rc, 0, "NULL string: 0 args");

	/* gcc -O2 -pie, exactly as in the note */
	rc = spec_parse("-4@g(%rip) -8@(%rax,%r8,8) -8@8+gs(%rip) 8@%r9", PC,
			fake_sym_fn, (void *)fake_syms, &sp, &mask, why, sizeof(why));
	UNIT_EQ_INT(rc, 4, "gcc -pie spec: 4 args");
	UNIT_EQ_INT(sp.ps_nargs, 4, "gcc -pie spec: ps_nargs");
	UNIT_EQ_INT(mask, 0, "gcc -pie spec: none bad");
	UNIT_EQ_STR(why, "", "gcc -pie spec: no reason");
	UNIT_EQ_INT(sp.ps_args[2].pa_val, 0x406028 - PC, "gcc -pie spec: arg 2 value");
	UNIT_EQ_INT(sp.ps_args[3].pa_reg_off, R9, "gcc -pie spec: arg 3 register");
	UNIT_EQ_INT(sp.ps_args[4].pa_kind, PC_ARG_NONE, "gcc -pie spec: slot 4 NONE");

	/* separators: runs of spaces and tabs, leading and trailing */
	rc = spec_parse("\t -4@%edi  \t8@-16(%rbp)\t\t-1@%ah ", PC, NULL, NULL,
			&sp, &mask, why, sizeof(why));
	UNIT_EQ_INT(rc, 3, "tabs and spaces: 3 args");
	UNIT_EQ_INT(sp.ps_args[1].pa_val, -16, "tabs and spaces: arg 1 displacement");
	UNIT_EQ_INT(sp.ps_args[2].pa_reg_shift, 8, "tabs and spaces: arg 2 %ah shift");

	/* bad operands keep their slot: later numbering unchanged */
	rc = spec_parse("-4@%edi 8@%rsi 4@%esi 8f@%xmm0 -8@$-1 4@%foo 8@-8(%rbp)", PC,
			NULL, NULL, &sp, &mask, why, sizeof(why));
	UNIT_EQ_INT(rc, 7, "bad in the middle: 7 args");
	UNIT_EQ_INT(sp.ps_nargs, 7, "bad in the middle: ps_nargs");
	UNIT_EQ_INT(mask, (1u << 3) | (1u << 5), "bad in the middle: bad_mask bits 3 and 5");
	UNIT_EQ_STR(why, "arg 3 '8f@%xmm0': floating-point operand", "bad in the middle: first reason");
	UNIT_EQ_INT(sp.ps_args[3].pa_kind, PC_ARG_BAD, "bad in the middle: arg 3 BAD");
	UNIT_EQ_INT(sp.ps_args[3].pa_size, 8, "bad in the middle: arg 3 keeps size");
	UNIT_EQ_INT(sp.ps_args[4].pa_kind, PC_ARG_CONST, "bad in the middle: arg 4 CONST");
	UNIT_EQ_INT(sp.ps_args[4].pa_val, -1, "bad in the middle: arg 4 value");
	UNIT_EQ_INT(sp.ps_args[5].pa_kind, PC_ARG_BAD, "bad in the middle: arg 5 BAD");
	UNIT_EQ_INT(sp.ps_args[6].pa_kind, PC_ARG_MEM, "bad in the middle: arg 6 MEM");
	UNIT_EQ_INT(sp.ps_args[6].pa_reg_off, BP, "bad in the middle: arg 6 base");
	UNIT_EQ_INT(sp.ps_args[6].pa_val, -8, "bad in the middle: arg 6 displacement");
	rc = spec_parse("4@%eax junk", PC, NULL, NULL, &sp, &mask, why, sizeof(why));
	UNIT_EQ_INT(rc, 2, "'4@%eax junk' is two operands");
	UNIT_EQ_INT(mask, 2, "'junk' is bad, %eax is not");
	rc = spec_parse("8@sym(%rip) 8f@%rcx", PC, NULL, NULL, &sp, NULL, NULL, 0);
	UNIT_EQ_INT(rc, 2, "NULL bad_mask and why are allowed");

	/* exactly 12 */
	rc = spec_parse("1@%al 2@%bx 4@%ecx 8@%rdx -1@%sil -2@%di -4@%ebp -8@%rsp "
			"1@%r8b 2@%r9w 4@%r10d 8@%r15", PC, NULL, NULL, &sp, &mask, why, sizeof(why));
	UNIT_EQ_INT(rc, 12, "12 operands");
	UNIT_EQ_INT(mask, 0, "12 operands: none bad");
	for (i = 0; i < 12; i++)
		UNIT_EQ_INT(sp.ps_args[i].pa_kind, PC_ARG_REG, "12 operands: every slot REG");
	UNIT_EQ_INT(sp.ps_args[11].pa_reg_off, R15, "12 operands: last is %r15");
	UNIT_EQ_INT(sp.ps_args[4].pa_signed, 1, "12 operands: -1@%sil signed");

	/* 12 with the last one bad: bit 11 */
	rc = spec_parse("1 2 3 4 5 6 7 8 9 10 11 8@%xmm0", PC, NULL, NULL, &sp, &mask, why, sizeof(why));
	UNIT_EQ_INT(rc, 12, "12 operands, last bad");
	UNIT_EQ_INT(mask, 1u << 11, "12 operands, last bad: bit 11");
	UNIT_EQ_INT(sp.ps_args[10].pa_val, 11, "size-less absolute memory '11'");

	/* 13: refused, nothing half-filled */
	rc = spec_parse("1@%al 2@%bx 4@%ecx 8@%rdx -1@%sil -2@%di -4@%ebp -8@%rsp "
			"1@%r8b 2@%r9w 4@%r10d 8@%r15 8@%r14", PC, NULL, NULL, &sp, &mask, why, sizeof(why));
	UNIT_EQ_INT(rc, -E2BIG, "13 operands: -E2BIG");
	UNIT_EQ_INT(sp.ps_nargs, 0, "13 operands: ps_nargs 0");
	UNIT_EQ_INT(sp.ps_args[0].pa_kind, PC_ARG_NONE, "13 operands: slots left NONE");
	UNIT_EQ_STR(why, "13 operands, at most 12 supported", "13 operands: message");

	/* a huge spec: many long operands */
	s = repeat("", 'x', 200000, "");
	for (i = 0; i < 200000; i += 1000)
		s[i] = ' ';
	rc = spec_parse(s, PC, fake_sym_fn, (void *)fake_syms, &sp, &mask, why, sizeof(why));
	UNIT_EQ_INT(rc, -E2BIG, "200 long operands: -E2BIG");
	s[12000] = '\0';
	rc = spec_parse(s, PC, fake_sym_fn, (void *)fake_syms, &sp, &mask, why, sizeof(why));
	UNIT_EQ_INT(rc, 12, "12 long operands: 12");
	UNIT_EQ_INT(mask, 0xfff, "12 long operands: all bad");
	UNIT_TRUE(strstr(why, "...': unknown symbol 'xxx"), "12 long operands: operand clipped, reason kept");
	UNIT_TRUE(strlen(why) < 200, "12 long operands: reason short");
	free(s);
}

int main(void)
{
	test_registers();
	test_op_cases();
	test_pt_regs_btf();
	test_no_symtab();
	test_long_tokens();
	test_prefixes_and_noise();
	test_parse_whole();
	UNIT_TRUE(fake_lookups > 0, "the symbol callback was used");
	return unit_done();
}
