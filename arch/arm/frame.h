/*
 * 32-bit ARM (AAPCS, hard-float VFP and soft-float base variants): the
 * register image a helper saves before it calls into C.  Offsets are
 * shared by helpers.S and abi.c; abi.c checks every one against struct
 * elt_arm_frame with _Static_assert.
 *
 * The caller passes the function id and its caller SP on the stack, 8
 * bytes, so the stack stays 8-byte aligned at the call:
 *
 *     push {rA, rB}        @ rA: function id at [sp], rB: caller SP at [sp, #4]
 *     bl   elt_helper_enter
 *
 * and the helper removes them before it returns.  Not in ip or lr: a
 * call through a PLT or a long-branch veneer clobbers ip, and bl writes
 * lr.
 *
 * The image is one block, from the helper's stack pointer up to the two
 * words the caller pushed: the helper pushes r0-r5, ip, lr just below
 * them and reserves the rest beneath (so the block needs only 4-byte
 * alignment: a caller with sp = 4 mod 8 works too).  d0-d7 are saved on
 * hard-float builds only; FPSCR there, and on soft-float builds when the
 * CPU has VFP (its rounding mode and masks); unused slots stay unwritten.
 */
#ifndef ELT_ARM_FRAME_H
#define ELT_ARM_FRAME_H

#define ELT_ARM_HOOK            0       /* uint32: ELT_HOOK_* */
#define ELT_ARM_FPSCR           4       /* restored whole (soft-float: if VFP) */
#define ELT_ARM_VFP             8       /* d0-d7 = s0-s15 = q0-q3 */
#define ELT_ARM_VFP_SLOT        8
#define ELT_ARM_VFP_COUNT       8
#define ELT_ARM_R0             72       /* r0-r3: arguments, r0:r1 result */
#define ELT_ARM_R2             80       /* also the continuation return */
#define ELT_ARM_R4             88       /* r4, r5: the helper's own scratch */
#define ELT_ARM_IP             96
#define ELT_ARM_LR            100       /* the return into the instrumented code */
#define ELT_ARM_FUNCTION_ID   104       /* pushed by the caller */
#define ELT_ARM_CALLER_SP     108       /* pushed by the caller */
#define ELT_ARM_FRAME_SIZE    112

/* The part below the helper's push {r0-r5, ip, lr}. */
#define ELT_ARM_RESERVE       ELT_ARM_R0

#ifndef __ASSEMBLER__
#include <stdint.h>

struct elt_arm_frame {
	uint32_t hook;
	uint32_t fpscr;
	unsigned char vfp[ELT_ARM_VFP_COUNT][ELT_ARM_VFP_SLOT];
	uint32_t r[4];
	uint32_t r4, r5;
	uint32_t ip;
	uint32_t lr;
	uint32_t function_id;
	uint32_t caller_sp;
};
#endif

#endif
