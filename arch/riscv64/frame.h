/*
 * riscv64 LP64D: the register image a helper saves before it calls into C.
 * Offsets are shared by helpers.S and abi.c; abi.c checks every one against
 * struct elt_riscv64_frame with _Static_assert.
 *
 * The caller passes the function id and its caller SP on the stack, in 16
 * bytes it reserves just before the call (so its SP stays 16-byte aligned):
 *
 *     addi sp, sp, -16
 *     sd   <function id>, 0(sp)
 *     sd   <caller SP>, 8(sp)
 *     call elt_helper_enter        # the helper frees the 16 bytes
 *
 * Not in t0/t1 as .NET does: a call through a PLT stub clobbers t1 and t3,
 * and the lazy resolver behind it (C code) any temporary.
 *
 * The image sits at the helper's 16-byte aligned stack pointer.  Argument
 * registers are kept in register order, so a value in a register pair
 * (a1:a2, fa0:fa1) is contiguous here and is read in place.
 */
#ifndef ELT_RISCV64_FRAME_H
#define ELT_RISCV64_FRAME_H

#define ELT_RISCV64_A0            0     /* a0-a7, 8 bytes each; a2 is also
                                           the continuation return */
#define ELT_RISCV64_T0           64     /* t0-t6, 8 bytes each */
#define ELT_RISCV64_FUNCTION_ID 120     /* from the caller's stack */
#define ELT_RISCV64_FA0         128     /* fa0-fa7, 8 bytes each (the full
                                           D register; a float in the low 4) */
#define ELT_RISCV64_CALLER_SP   192     /* from the caller's stack */
#define ELT_RISCV64_FCSR        200     /* uint32: rounding mode and flags */
#define ELT_RISCV64_HOOK        204     /* uint32: ELT_HOOK_* */
#define ELT_RISCV64_FRAME_SIZE  208

#define ELT_RISCV64_GPR_ARGS      8
#define ELT_RISCV64_FPR_ARGS      8

#ifndef __ASSEMBLER__
#include <stdint.h>

struct elt_riscv64_frame {
	uint64_t a[ELT_RISCV64_GPR_ARGS];
	uint64_t t[7];
	uint64_t function_id;
	uint64_t fa[ELT_RISCV64_FPR_ARGS];
	uint64_t caller_sp;
	uint32_t fcsr;
	uint32_t hook;
};
#endif

#endif
