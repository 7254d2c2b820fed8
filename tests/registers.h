/*
 * The register-preservation test's view of one ABI, implemented in
 * arch/<arch>/registers.c and registers.S: fill every register that a
 * helper must preserve with canaries, call the helper exactly as
 * instrumented code does, capture every register after it, compare.
 */
#ifndef ELT_TESTS_REGISTERS_H
#define ELT_TESTS_REGISTERS_H

#include <stddef.h>
#include <stdint.h>

struct regs;                            /* the ABI's register image */
extern const size_t regs_size;          /* bytes to allocate, 64-aligned */

/* What this machine has, for the test log ("AVX-512: zmm0-7 at 64 bytes"). */
const char *regs_describe(void);

/* Results a Leave may have to keep beyond the ordinary registers (x87
 * st0/st1 on x86): variant 0 is "none". */
unsigned regs_leave_variants(void);
const char *regs_variant_name(unsigned variant);

/* Canaries everywhere, derived from `seed`.  The function id and caller SP
 * go where the ABI passes them; `continuation` 0 clears the continuation
 * argument and return registers (a call or a final return), anything else
 * leaves canaries there.  `misalign`: call with the stack misaligned, as
 * far as the ABI allows a caller to. */
void regs_fill(struct regs *in, unsigned seed, unsigned variant, int misalign,
	       uintptr_t function_id, uintptr_t caller_sp, int continuation);
/* Loads *in, calls `helper`, stores every register into *out. */
void regs_call(void (*helper)(void), const struct regs *in, struct regs *out);
/* 1 when every preserved register is intact; else 0 and `why`. */
int regs_compare(const struct regs *in, const struct regs *out, char *why,
		 size_t why_len);
/* Overwrites every caller-saved register, as any C code may. */
void regs_clobber(void);

#endif
