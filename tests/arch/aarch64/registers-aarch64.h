/*
 * The register image registers-call.S loads before calling a helper and
 * stores after it.  Offsets are checked in registers.c.
 */
#ifndef ELT_TESTS_REGISTERS_AARCH64_H
#define ELT_TESTS_REGISTERS_AARCH64_H

#define REGS_X             0    /* 31 x 8: x0-x30 */
#define REGS_SP          248    /* out: SP after the call */
#define REGS_Q           256    /* 32 x 16: q0-q31 */
#define REGS_FPCR        768    /* uint64 */
#define REGS_FPSR        776    /* uint64 */
#define REGS_MISALIGN    784    /* uint32, in: SP = 16 mod 32 at the call */
#define REGS_FUNCTION_ID 792    /* in: stored for the helper */
#define REGS_CALLER_SP   800    /* in: stored for the helper */
#define REGS_VL          808    /* uint64: SVE vector length in bytes, 0 without SVE */
#define REGS_Z           832    /* 32 x VL bytes, room for VL = 256: z0-z31 */
#define REGS_P          9024    /* 16 x VL/8 bytes, room for VL = 256: p0-p15 */
#define REGS_SIZE       9536
#define REGS_VL_MAX      256

#ifndef __ASSEMBLER__
#include <stdint.h>

struct regs {
	uint64_t x[31];
	uint64_t sp;
	unsigned char q[32][16];
	uint64_t fpcr, fpsr;
	uint32_t misalign;
	uint32_t pad;
	uint64_t function_id;
	uint64_t caller_sp;
	uint64_t vl;
	uint64_t pad2[2];
	unsigned char z[32 * REGS_VL_MAX];      /* z<n> at n * vl */
	unsigned char p[16 * REGS_VL_MAX / 8];  /* p<n> at n * vl / 8 */
} __attribute__((aligned(64)));

extern uint64_t regs_sp_at_call;        /* SP just before the two words */
extern uint64_t regs_return_point;      /* the instruction after the call */

/* registers-call.S: SVE, called only where the CPU has it. */
uint64_t regs_sve_vl(void);             /* the vector length in bytes */
void regs_clobber_sve(void);            /* z0-z7, z16-z31, p0-p15 */

#endif

#endif
