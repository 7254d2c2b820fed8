/*
 * i386 System V (Linux, cdecl): the register image a helper saves before
 * it calls into C.  Offsets are shared by helpers.S and abi.c; abi.c checks
 * every one against struct elt_i386_frame with _Static_assert.
 *
 * The image sits at the 64-byte aligned stack pointer of the helper, so a
 * full zmm register fits one naturally aligned slot.
 *
 * The caller passes the function id and its caller SP on the stack:
 *
 *     push <caller SP>; push <function id>; call elt_helper_enter
 *
 * and the helper pops them (ret $8), handing both to C as arguments.  Every C argument is on the stack on
 * this ABI, but eax, edx and ecx carry regparm/fastcall arguments, the
 * int64 result (edx:eax) and the continuation (ecx), so the helper takes
 * nothing from registers.
 */
#ifndef ELT_I386_FRAME_H
#define ELT_I386_FRAME_H

#define ELT_I386_EAX            0       /* result; eax then edx: an int64 or */
#define ELT_I386_EDX            4       /* _Complex float result reads in place */
#define ELT_I386_ECX            8       /* the continuation return */
#define ELT_I386_MXCSR         12       /* uint32: the code's MXCSR (with SSE) */
#define ELT_I386_FCW           16       /* uint16: the code's x87 control word */
#define ELT_I386_SCRATCH       20       /* uint32: MXCSR/FCW after the plugins */
#define ELT_I386_VEC_WIDTH     24       /* uint32: what was saved (ELT_I386_VEC_*) */
#define ELT_I386_X87_DEPTH     28       /* uint32: x87 registers saved (elt_helper_leave_x87 only) */
#define ELT_I386_ST0_DOUBLE    32       /* st0 rounded to double (depth >= 1) */
#define ELT_I386_ST0_FLOAT     40       /* st0 rounded to float (depth >= 1) */
#define ELT_I386_X87_ENV       44       /* fnstenv image, 28 bytes (depth >= 1) */
#define ELT_I386_X87_ENV_SIZE  28
#define ELT_I386_X87           80       /* st0, st1: 16 bytes each, 80 bits used */
#define ELT_I386_X87_SLOT      16
#define ELT_I386_VEC          128       /* xmm0-7 / ymm0-7 / zmm0-7 */
#define ELT_I386_VEC_SLOT      64
#define ELT_I386_VEC_COUNT      8
#define ELT_I386_FRAME_SIZE   640
#define ELT_I386_FRAME_ALIGN   64

/* Which part of the vector registers exists and is saved (the rest of
 * each slot is left as it was): the row of helper bodies abi.c chooses. */
#define ELT_I386_VEC_NONE       0       /* no SSE: no xmm registers */
#define ELT_I386_VEC_SSE        1       /* 16 bytes */
#define ELT_I386_VEC_AVX        2       /* 32 bytes */
#define ELT_I386_VEC_AVX512     3       /* 64 bytes */
#define ELT_I386_VEC_WIDTHS     4

/* Offsets in elt_i386_body, the bodies each public helper jumps to when
 * armed. */
#define ELT_I386_BODY_ENTER      0
#define ELT_I386_BODY_LEAVE      4
#define ELT_I386_BODY_LEAVE_X87  8
#define ELT_I386_BODY_TAILCALL  12
#define ELT_I386_BODY_COUNT      4

#ifndef __ASSEMBLER__
#include <stdint.h>

struct elt_i386_frame {
	uint32_t eax, edx, ecx;
	uint32_t mxcsr;
	uint16_t fcw;
	uint16_t pad;
	uint32_t scratch;
	uint32_t vec_width;
	uint32_t x87_depth;
	double st0_double __attribute__((aligned(8)));
	float st0_float;
	unsigned char x87_env[ELT_I386_X87_ENV_SIZE];
	unsigned char x87[2][ELT_I386_X87_SLOT] __attribute__((aligned(16)));
	unsigned char vec[ELT_I386_VEC_COUNT][ELT_I386_VEC_SLOT] __attribute__((aligned(64)));
};
#endif

#endif
