/*
 * x86-64 Windows (Microsoft x64): the register image a helper saves before
 * it calls into C.  Offsets are shared by helpers-win64.S and win64.c;
 * win64.c checks every one against struct elt_x86_64_win64_frame.
 *
 * The image sits 64-byte aligned, 32 bytes above the stack pointer of the
 * C call (the home area the Win64 caller reserves for its callee), so a
 * full zmm register fits one naturally aligned slot.
 *
 * The caller passes the function id and its caller SP on the stack, as on
 * System V:
 *
 *     push <caller SP>; push <function id>; call elt_helper_enter
 *
 * and the helper pops them (ret $16): a call through an import thunk or a
 * lazily bound stub may use the volatile registers, so no register input.
 */
#ifndef ELT_X86_64_WIN64_FRAME_H
#define ELT_X86_64_WIN64_FRAME_H

/* The integer argument registers, in argument order, then the rest of the
 * volatile ones. */
#define ELT_WIN64_RCX           0       /* also the continuation return */
#define ELT_WIN64_RDX           8
#define ELT_WIN64_R8           16
#define ELT_WIN64_R9           24
#define ELT_WIN64_RAX          32       /* return */
#define ELT_WIN64_R10          40
#define ELT_WIN64_R11          48
#define ELT_WIN64_MXCSR        56       /* uint32: the code's MXCSR */
#define ELT_WIN64_FCW          60       /* uint16: the code's x87 control word */
#define ELT_WIN64_SCRATCH      64       /* uint32: MXCSR/FCW after the plugins */
#define ELT_WIN64_VEC         128       /* xmm/ymm/zmm 0-15 */
#define ELT_WIN64_VEC_SLOT     64
#define ELT_WIN64_VEC_COUNT    16
#define ELT_WIN64_FRAME_SIZE 1152
#define ELT_WIN64_FRAME_ALIGN  64
#define ELT_WIN64_HOME         32       /* the callee's home area, below the image */

#ifndef __ASSEMBLER__
#include <stdint.h>

struct elt_x86_64_win64_frame {
	uint64_t rcx, rdx, r8, r9;
	uint64_t rax, r10, r11;
	uint32_t mxcsr;
	uint16_t fcw;
	uint16_t pad;
	uint32_t scratch;
	unsigned char pad2[60];
	unsigned char vec[ELT_WIN64_VEC_COUNT][ELT_WIN64_VEC_SLOT];
};
#endif

#endif
