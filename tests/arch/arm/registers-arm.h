/*
 * The register image registers-call.S loads before calling a helper and
 * stores after it.  Offsets are checked in registers.c.
 */
#ifndef ELT_TESTS_REGISTERS_ARM_H
#define ELT_TESTS_REGISTERS_ARM_H

#define REGS_R            0     /* 16 x 4: r0-r15; after the call r13 is
                                   sp and r14 lr */
#define REGS_D           64     /* 16 x 8: d0-d15 (hard-float) */
#define REGS_FPSCR      192     /* hard-float */
#define REGS_VFP        196     /* uint32, in: 1 loads and captures d0-d15
                                   and FPSCR */
#define REGS_MISALIGN   200     /* uint32, in: call with sp = 4 mod 8 */
#define REGS_FUNCTION_ID 204    /* in: pushed for the helper */
#define REGS_CALLER_SP  208     /* in: pushed for the helper */
#define REGS_SIZE       256

#define SP 13
#define LR 14

#ifndef __ASSEMBLER__
#include <stdint.h>

struct regs {
	uint32_t r[16];
	uint64_t d[16];
	uint32_t fpscr;
	uint32_t vfp;
	uint32_t misalign;
	uint32_t function_id;
	uint32_t caller_sp;
} __attribute__((aligned(64)));

extern uint32_t regs_sp_at_call;        /* sp just before the push */
extern uint32_t regs_return_address;    /* what bl/blx left in lr */

#endif

#endif
