/*
 * spec.h — x86-64 USDT argument specs ("-4@%edi 8@-16(%rbp) ...").
 *
 * Each space-separated operand is [-]N[f]@OPERAND: N is the size in bytes,
 * '-' means signed, 'f' floating point (unsupported: reported).  A V1/V2
 * note may omit "N@"; the size is then 8, unsigned.
 */
#ifndef PC_SPEC_H
#define PC_SPEC_H

#include <linux/types.h>
#include <stdint.h>
#include "pc_bpf.h"

/* Resolves a symbol name to its link-time address; 0 or -ENOENT. */
typedef int (*spec_sym_fn)(void *ctx, const char *name, uint64_t *addr);

/*
 * Parse one operand into @arg.  @pc is the site's link-time address (for
 * rip-relative and symbolic operands).  Returns 0, or -EINVAL with a reason
 * in @why (size @whylen); on error @arg is PC_ARG_BAD with the declared
 * size kept if it could be read.
 */
int spec_parse_arg(const char *op, uint64_t pc, spec_sym_fn sym, void *symctx,
		   struct pc_arg *arg, char *why, size_t whylen);

/*
 * Parse a whole argument string.  Operands that fail become PC_ARG_BAD in
 * their own slot: later arguments keep their numbers.  Returns the number
 * of operands (0..PC_MAX_ARGS), or -E2BIG past PC_MAX_ARGS.  @bad_mask
 * gets bit i for every unreadable operand i; @why the first reason.
 */
int spec_parse(const char *args, uint64_t pc, spec_sym_fn sym, void *symctx,
	       struct pc_spec *spec, uint32_t *bad_mask, char *why, size_t whylen);

/* Byte offset into kernel struct pt_regs for a register name (no '%'),
 * with its width and the 8 for high-byte registers; -1 if unknown. */
int spec_reg_lookup(const char *name, int *size, int *shift);

#endif
