/*
 * The register image registers-call.S loads before calling a helper and
 * stores after it (x86-64 Windows).  Offsets are checked in registers.c.
 */
#ifndef ELT_TESTS_REGISTERS_X86_64_WIN64_H
#define ELT_TESTS_REGISTERS_X86_64_WIN64_H

#define REGS_GPR          0     /* 16 x 8, hardware order (see below) */
#define REGS_VEC        128     /* 16 x 64: zmm0-15 */
#define REGS_MXCSR     1152     /* uint32 */
#define REGS_FPUCW     1156     /* uint16 */
#define REGS_WIDTH     1160     /* uint32, in: 0 SSE, 1 AVX, 2 AVX-512 */
#define REGS_MISALIGN  1164     /* uint32, in: call with %rsp = 8 mod 16 */
#define REGS_FUNCTION_ID 1168   /* in: pushed for the helper */
#define REGS_CALLER_SP 1176     /* in: pushed for the helper */
#define REGS_SIZE      1216

/* Hardware numbering of the general registers. */
#define RAX 0
#define RCX 1
#define RDX 2
#define RBX 3
#define RSP 4
#define RBP 5
#define RSI 6
#define RDI 7

#ifndef __ASSEMBLER__
#include <stdint.h>

struct regs {
	uint64_t gpr[16];
	unsigned char vec[16][64];
	uint32_t mxcsr;
	uint16_t fpucw;
	uint16_t pad;
	uint32_t width;
	uint32_t misalign;
	uint64_t function_id;
	uint64_t caller_sp;
} __attribute__((aligned(64)));

extern uint64_t regs_rsp_at_call;      /* %rsp just before the pushes */

#endif

#endif
