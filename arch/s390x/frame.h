/*
 * s390x (z/Architecture ELF ABI, Linux): the register image a helper saves
 * before it calls into C.  Offsets are shared by helpers.S and abi.c;
 * abi.c checks every one against struct elt_s390x_frame with
 * _Static_assert.
 *
 * The caller passes the function id and its caller SP on the stack, in
 * the outgoing-argument area of its own frame, just above the 160-byte
 * register save area it provides to every callee:
 *
 *     stg  <function id>, 160(%r15)
 *     stg  <caller SP>,   168(%r15)
 *     brasl %r14, elt_helper_enter
 *
 * Not in %r0/%r1: a call through a lazily bound PLT runs the PLT stub
 * (which loads %r1) and the dynamic linker's resolver first, and both are
 * the ABI's scratch registers.  Not in the save area either: the PLT's
 * first entry writes into it at 48(%r15) and 56(%r15).  The 16 bytes belong to
 * the caller's frame, like any stack argument on this ABI, so the helper
 * leaves %r15 as it found it.
 *
 * Big-endian: a value narrower than its 8-byte register slot sits in the
 * slot's last bytes (the low-order byte of %r2 is at GPR(2) + 7); a float
 * in an FP register sits in its first 4 bytes (the short format uses the
 * register's leftmost 32 bits).
 */
#ifndef ELT_S390X_FRAME_H
#define ELT_S390X_FRAME_H

/* The image, at 160(%r15) in the helper (above its callee's save area). */
#define ELT_S390X_GPR            0      /* r0-r15, 8 bytes each */
#define ELT_S390X_GPR_SLOT       8
#define ELT_S390X_VEC          128      /* v0-v7, 16 bytes each; f0-f7 are */
#define ELT_S390X_VEC_SLOT      16      /* the leftmost 8 bytes of each */
#define ELT_S390X_VEC_LOW_COUNT  8
#define ELT_S390X_VEC_HIGH     256      /* v24-v31 (vector facility only) */
#define ELT_S390X_VEC_HIGH_COUNT 8
#define ELT_S390X_FUNCTION_ID  384      /* stored by the caller at 160(%r15) */
#define ELT_S390X_CALLER_SP    392      /* stored by the caller at 168(%r15) */
#define ELT_S390X_FPC          400      /* uint32: the FP control register */
#define ELT_S390X_HOOK         404      /* uint32: ELT_HOOK_* */
#define ELT_S390X_FRAME_SIZE   408

#define ELT_S390X_GPR_AT(n)     (ELT_S390X_GPR + (n) * ELT_S390X_GPR_SLOT)
/* f0, f2, f4, f6 are v0, v2, v4, v6's leftmost 8 bytes. */
#define ELT_S390X_FPR_AT(n)     (ELT_S390X_VEC + (n) * ELT_S390X_VEC_SLOT)

/* The stack, as the ABI lays it out. */
#define ELT_S390X_SAVE_AREA    160      /* every caller provides it at 0(%r15) */
#define ELT_S390X_SAVE_R14     112      /* the save area's slot for %r14 */
#define ELT_S390X_SAVE_R2       16      /* %r2's slot: the idle check keeps %r1 there */
#define ELT_S390X_STACK_ARGS   160      /* first stack argument, from the SP */
#define ELT_S390X_IN_ID        160      /* the helper's inputs, at the call */
#define ELT_S390X_IN_CALLER_SP 168
/* The helper's own frame: its callee's save area, then the image.  A
 * multiple of 8 keeps %r15 as aligned as the ABI wants it. */
#define ELT_S390X_IMAGE        ELT_S390X_SAVE_AREA
#define ELT_S390X_HELPER_FRAME (ELT_S390X_SAVE_AREA + ELT_S390X_FRAME_SIZE)

#ifndef __ASSEMBLER__
#include <stdint.h>

struct elt_s390x_frame {
	uint64_t gpr[16];
	unsigned char vec[ELT_S390X_VEC_LOW_COUNT][ELT_S390X_VEC_SLOT];
	unsigned char vec_high[ELT_S390X_VEC_HIGH_COUNT][ELT_S390X_VEC_SLOT];
	uint64_t function_id;
	uint64_t caller_sp;
	uint32_t fpc;
	uint32_t hook;
};
#endif

#endif
