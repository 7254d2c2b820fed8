/*
 * ppc64le (PowerPC64 ELFv2): the register image a helper saves before it
 * calls into C.  Offsets are shared by helpers.S and abi.c; abi.c checks
 * every one against struct elt_ppc64le_frame with _Static_assert.
 *
 * The image is the helper's whole stack frame, addressed from its r1: the
 * first 32 bytes are the ELFv2 frame header the C callee may use (its CR
 * and LR save slots, the TOC save slot of a PLT stub), the rest is ours.
 *
 * The caller passes the function id and its caller SP in the first two
 * doublewords of its own parameter save area, at 32(r1) and 40(r1):
 *
 *     std rX, 32(r1)          # function id
 *     std rY, 40(r1)          # caller SP
 *     bl  elt_helper_enter    # then the nop the linker may turn into
 *     nop                     #   ld r2, 24(r1)
 *
 * Not in r11/r12/r0: a call through a PLT stub or the lazy resolver
 * clobbers them (and ctr) before the helper runs.  Not in a small frame
 * the caller pushes: a PLT stub saves the caller's TOC at 24(r1) of the
 * frame current at the call, and the caller reloads it from 24(r1) after
 * the call, so r1 must be the same before and after.
 */
#ifndef ELT_PPC64LE_FRAME_H
#define ELT_PPC64LE_FRAME_H

/* In the caller's frame, from its r1 at the call. */
#define ELT_PPC64LE_IN_FUNCTION_ID 32
#define ELT_PPC64LE_IN_CALLER_SP   40
#define ELT_PPC64LE_CALLER_MIN_FRAME 48 /* header + the two inputs */

/* From the caller SP of the instrumented function: where its prolog saved
 * the link register (its return address), and its stack arguments. */
#define ELT_PPC64LE_LR_SAVE        16
#define ELT_PPC64LE_PARAM_SAVE     32

/* The helper's frame, from its r1. */
#define ELT_PPC64LE_HEADER          0   /* back chain, CR, LR, TOC: the ABI's */
#define ELT_PPC64LE_FUNCTION_ID    32   /* copied from the caller's frame */
#define ELT_PPC64LE_CALLER_SP      40
#define ELT_PPC64LE_HOOK           48   /* uint32: ELT_HOOK_* */
#define ELT_PPC64LE_CR             52   /* uint32: all eight fields */
#define ELT_PPC64LE_CTR            56
#define ELT_PPC64LE_XER            64
#define ELT_PPC64LE_FPSCR          72   /* as mffs gives it: 64 bits */
#define ELT_PPC64LE_GPR            80   /* r0..r12; the r1 slot: r1 at the call */
#define ELT_PPC64LE_GPR_COUNT      13
#define ELT_PPC64LE_FS            184   /* f0..f13 stored single (stfs), 4 each */
#define ELT_PPC64LE_VSR           240   /* vs0..vs13 = f0..f13 at 128 bits */
#define ELT_PPC64LE_VR            464   /* v0..v13 = vs32..vs45 (stvx order) */
#define ELT_PPC64LE_VEC_SLOT       16
#define ELT_PPC64LE_VEC_COUNT      14
#define ELT_PPC64LE_VSCR          688   /* as mfvscr gives it, stored by stvx */
#define ELT_PPC64LE_FRAME_SIZE    704

#define ELT_PPC64LE_GPR_AT(n)  (ELT_PPC64LE_GPR + 8 * (n))
#define ELT_PPC64LE_FS_AT(n)   (ELT_PPC64LE_FS + 4 * (n))
#define ELT_PPC64LE_VSR_AT(n)  (ELT_PPC64LE_VSR + ELT_PPC64LE_VEC_SLOT * (n))
#define ELT_PPC64LE_VR_AT(n)   (ELT_PPC64LE_VR + ELT_PPC64LE_VEC_SLOT * (n))

#ifndef __ASSEMBLER__
#include <stdint.h>

struct elt_ppc64le_frame {
	uint64_t header[4];
	uint64_t function_id;
	uint64_t caller_sp;
	uint32_t hook;
	uint32_t cr;
	uint64_t ctr;
	uint64_t xer;
	uint64_t fpscr;
	uint64_t gpr[ELT_PPC64LE_GPR_COUNT];
	/* A float lives in an FPR in double format: the helper also stores
	 * each argument FPR as a single, so a float has 4 bytes to point at. */
	float fs[ELT_PPC64LE_VEC_COUNT];
	/* stxvd2x: doubleword 0 (the FPR, a double) at offset 0. */
	unsigned char vsr[ELT_PPC64LE_VEC_COUNT][ELT_PPC64LE_VEC_SLOT]
		__attribute__((aligned(16)));
	/* stvx: the vector's memory image, element 0 first. */
	unsigned char vr[ELT_PPC64LE_VEC_COUNT][ELT_PPC64LE_VEC_SLOT];
	unsigned char vscr[ELT_PPC64LE_VEC_SLOT];
};
#endif

#endif
