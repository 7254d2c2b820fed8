/*
 * AArch64 (AAPCS64, Linux): the register image a helper saves before it
 * calls into C.  Offsets are shared by helpers.S and abi.c; abi.c checks
 * every one against struct elt_aarch64_frame with _Static_assert.
 *
 * The caller reserves 16 bytes, stores the function id and its caller SP
 * there and calls:
 *
 *     stp  x<id>, x<caller SP>, [sp, #-16]!
 *     bl   elt_helper_enter
 *
 * and the helper releases them (SP is 16 bytes higher when it returns).
 * Not in x9-x17: a call through a lazily bound PLT goes through x16/x17
 * and the dynamic linker's resolver, which clobbers x9-x15 (and x18).
 *
 * The image sits at the helper's 16-byte aligned SP and ends where the
 * caller's two words begin, so they are read in place: the struct covers
 * them, the helper allocates ELT_AARCH64_FRAME_SIZE bytes below them.
 * Its first two words are the helper's frame record: x29 then points at
 * it, chained to the instrumented function's own record.
 *
 * Where the CPU has SVE, z0-z7 and then p0-p3 are stored below the image
 * (9 vector lengths); nothing decodes them yet, they are only restored.
 */
#ifndef ELT_AARCH64_FRAME_H
#define ELT_AARCH64_FRAME_H

#define ELT_AARCH64_FP            0     /* x29 of the instrumented function */
#define ELT_AARCH64_LR            8     /* x30: the return into it */
#define ELT_AARCH64_X0           16     /* x0-x7 in argument order, then x8 */
#define ELT_AARCH64_X_COUNT       9
#define ELT_AARCH64_X2           32     /* the continuation return register */
#define ELT_AARCH64_X8           80     /* the indirect result location */
#define ELT_AARCH64_HOOK         88     /* uint32: ELT_HOOK_* */
#define ELT_AARCH64_FPCR         96     /* uint64, as mrs reads it */
#define ELT_AARCH64_FPSR        104     /* uint64 */
#define ELT_AARCH64_Q0          112     /* q0-q7, 16 bytes each */
#define ELT_AARCH64_Q_SLOT       16
#define ELT_AARCH64_Q_COUNT       8
#define ELT_AARCH64_FRAME_SIZE  240     /* allocated by the helper */
#define ELT_AARCH64_FUNCTION_ID 240     /* stored by the caller */
#define ELT_AARCH64_CALLER_SP   248     /* stored by the caller */
#define ELT_AARCH64_CALLER_WORDS 16     /* released by the helper */

#ifndef __ASSEMBLER__
#include <stdint.h>

struct elt_aarch64_frame {
	uint64_t fp, lr;
	uint64_t x[ELT_AARCH64_X_COUNT];
	uint32_t hook;
	uint32_t pad;
	uint64_t fpcr, fpsr;
	unsigned char q[ELT_AARCH64_Q_COUNT][ELT_AARCH64_Q_SLOT]
		__attribute__((aligned(16)));
	uint64_t function_id;
	uint64_t caller_sp;
};
#endif

#endif
