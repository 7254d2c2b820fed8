/*
 * The register image registers-call.S loads before calling a helper and
 * stores after it.  Offsets are checked in registers.c.
 */
#ifndef ELT_TESTS_REGISTERS_S390X_H
#define ELT_TESTS_REGISTERS_S390X_H

#define REGS_GPR           0    /* r0-r15, 8 bytes each */
#define REGS_VEC         128    /* v0-v31, 16 bytes each: f0-f15 are the */
                                /* leftmost 8 bytes of v0-v15 */
#define REGS_FPC         640    /* uint32: the FP control register */
#define REGS_VECTOR      644    /* uint32, in: 1 with the vector facility */
#define REGS_MISALIGN    648    /* uint32, in: call with %r15 = 8 mod 16 */
#define REGS_FUNCTION_ID 656    /* in: stored at 160(%r15) for the helper */
#define REGS_CALLER_SP   664    /* in: stored at 168(%r15) */
#define REGS_SIZE        704

#ifndef __ASSEMBLER__
#include <stdint.h>

struct regs {
	uint64_t gpr[16];
	unsigned char vec[32][16];
	uint32_t fpc;
	uint32_t vector;
	uint32_t misalign;
	uint32_t pad;
	uint64_t function_id;
	uint64_t caller_sp;
} __attribute__((aligned(64)));

/* %r15 at the call, and where the helper must return to (%r14 after). */
extern uint64_t regs_sp_at_call;
extern uint64_t regs_return_point;

#endif

#endif
