/*
 * The register image registers-call.S loads before calling a helper and
 * stores after it.  Offsets are checked in registers.c.
 */
#ifndef ELT_TESTS_REGISTERS_I386_H
#define ELT_TESTS_REGISTERS_I386_H

#define REGS_GPR          0     /* 8 x 4, hardware order (see below) */
#define REGS_VEC         64     /* 8 x 64: zmm0-7 */
#define REGS_X87        576     /* 2 x 16: st0, st1 */
#define REGS_X87_DEPTH  608     /* uint32: x87 registers in use */
#define REGS_MXCSR      612     /* uint32 */
#define REGS_FPUCW      616     /* uint16 */
#define REGS_FPUSW      618     /* uint16, out: the x87 status word */
#define REGS_WIDTH      620     /* uint32, in: WIDTH_* */
#define REGS_MISALIGN   624     /* uint32, in: call with %esp = 12 mod 16 */
#define REGS_FUNCTION_ID 628    /* in: pushed for the helper */
#define REGS_CALLER_SP  632     /* in: pushed for the helper */
#define REGS_SIZE       640

/* Which vector registers this CPU has (as the OS saves them). */
#define WIDTH_NONE   0          /* no SSE */
#define WIDTH_SSE    1          /* xmm0-7 */
#define WIDTH_AVX    2          /* ymm0-7 */
#define WIDTH_AVX512 3          /* zmm0-7 */

/* Hardware numbering of the general registers. */
#define EAX 0
#define ECX 1
#define EDX 2
#define EBX 3
#define ESP 4
#define EBP 5
#define ESI 6
#define EDI 7

#ifndef __ASSEMBLER__
#include <stdint.h>

struct regs {
	uint32_t gpr[8];
	uint32_t pad[8];
	unsigned char vec[8][64];
	unsigned char x87[2][16];
	uint32_t x87_depth;
	uint32_t mxcsr;
	uint16_t fpucw;
	uint16_t fpusw;
	uint32_t width;
	uint32_t misalign;
	uint32_t function_id;
	uint32_t caller_sp;
} __attribute__((aligned(64)));

extern uint32_t regs_esp_at_call;      /* %esp just before the pushes */
/* Overwrites xmm0-7 (and the upper halves with AVX) for this width. */
void regs_clobber_vectors(unsigned width);

#endif

#endif
