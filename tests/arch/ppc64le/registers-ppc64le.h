/*
 * The register image registers-call.S loads before calling a helper and
 * stores after it.  Offsets are checked in registers.c.
 */
#ifndef ELT_TESTS_REGISTERS_PPC64LE_H
#define ELT_TESTS_REGISTERS_PPC64LE_H

#define REGS_GPR            0   /* r0..r31; r1 and r13 are not loaded */
#define REGS_VSR          256   /* vs0..vs63, 16 each, as lxvd2x/stxvd2x see them */
#define REGS_CR          1280   /* low 32 bits: cr0..cr7 */
#define REGS_CTR         1288
#define REGS_XER         1296
#define REGS_LR          1304   /* out: lr after the call */
#define REGS_FPSCR       1312   /* as mffs/mtfsf see it (lfd/stfd image) */
#define REGS_VSCR        1328   /* as mfvscr/mtvscr see it (lvx/stvx image) */
#define REGS_MISALIGN    1344   /* uint32, in: r1 = 16 mod 64 instead of 0 */
#define REGS_FUNCTION_ID 1352   /* in: stored at 32(r1) for the helper */
#define REGS_CALLER_SP   1360   /* in: stored at 40(r1) for the helper */
#define REGS_SP_AT_CALL  1368   /* out: r1 at the call */
#define REGS_LR_EXPECTED 1376   /* out: the return point after the call */
#define REGS_R13_AT_CALL 1384   /* out: the thread pointer before the call */
#define REGS_SIZE        1408

#ifndef __ASSEMBLER__
#include <stdint.h>

struct regs {
	uint64_t gpr[32];
	unsigned char vsr[64][16];
	uint64_t cr;
	uint64_t ctr;
	uint64_t xer;
	uint64_t lr;
	uint64_t fpscr;
	uint64_t pad;
	uint32_t vscr[4];       /* [0]: VSCR (little-endian stvx image) */
	uint32_t misalign;
	uint32_t pad2;
	uint64_t function_id;
	uint64_t caller_sp;
	uint64_t sp_at_call;
	uint64_t lr_expected;
	uint64_t r13_at_call;
} __attribute__((aligned(64)));
#endif

#endif
