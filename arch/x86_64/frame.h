/*
 * x86-64 System V: the register image a helper saves before it calls into C.
 * Offsets are shared by helpers-sysv.S and sysv.c; sysv.c checks every one against
 * struct elt_x86_64_frame with _Static_assert.
 *
 * The image sits at the 64-byte aligned stack pointer of the helper, so a
 * full zmm register fits one naturally aligned slot.
 *
 * The caller passes the function id and its caller SP on the stack, which
 * the helper hands to C as arguments:
 *
 *     push <caller SP>; push <function id>; call elt_helper_enter
 *
 * and the helper pops them (ret $16).  Not in %r10/%r11: a call through a
 * lazily bound PLT runs the dynamic linker's resolver first, which
 * clobbers both, and the x86 IBT PLT uses %r11 too.
 */
#ifndef ELT_X86_64_FRAME_H
#define ELT_X86_64_FRAME_H

/* Integer argument registers, in argument order. */
#define ELT_X86_64_RDI          0
#define ELT_X86_64_RSI          8
#define ELT_X86_64_RDX         16
#define ELT_X86_64_RCX         24       /* also the continuation return */
#define ELT_X86_64_R8          32
#define ELT_X86_64_R9          40
#define ELT_X86_64_RAX         48       /* return; %al = vector args of a varargs call */
#define ELT_X86_64_R10         56
#define ELT_X86_64_R11         64
#define ELT_X86_64_X87_DEPTH   72       /* uint32: x87 registers saved (elt_helper_leave_x87 only) */
#define ELT_X86_64_MXCSR       76       /* uint32: the code's MXCSR */
#define ELT_X86_64_X87         80       /* st0, st1: 16 bytes each, 80 bits used */
#define ELT_X86_64_X87_SLOT    16
#define ELT_X86_64_FCW        112       /* uint16: the code's x87 control word */
#define ELT_X86_64_SCRATCH    116       /* uint32: MXCSR/FCW after the plugins */
#define ELT_X86_64_VEC        128       /* xmm0-7 / ymm0-7 / zmm0-7 */
#define ELT_X86_64_VEC_SLOT    64
#define ELT_X86_64_VEC_COUNT    8
#define ELT_X86_64_FRAME_SIZE 640
#define ELT_X86_64_FRAME_ALIGN 64

#ifndef __ASSEMBLER__
#include <stdint.h>

struct elt_x86_64_frame {
	uint64_t rdi, rsi, rdx, rcx, r8, r9;
	uint64_t rax;
	uint64_t r10;
	uint64_t r11;
	uint32_t x87_depth;
	uint32_t mxcsr;
	unsigned char x87[2][ELT_X86_64_X87_SLOT];
	uint16_t fcw;
	uint16_t pad;
	uint32_t scratch;
	uint64_t pad2;
	unsigned char vec[ELT_X86_64_VEC_COUNT][ELT_X86_64_VEC_SLOT];
};
#endif

#endif
