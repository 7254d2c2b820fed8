/*
 * The register image the x86-64 test fixtures load before calling a helper
 * and store after it.  Offsets are shared with arch/x86_64/fixture.S and
 * checked in test-helpers.c.
 */
#ifndef ELT_TESTS_REGS_H
#define ELT_TESTS_REGS_H

#define REGS_GPR          0     /* 16 x 8, hardware order (see below) */
#define REGS_VEC        128     /* 16 x 64: zmm0-15 */
#define REGS_X87       1152     /* 2 x 16: st0, st1 */
#define REGS_X87_DEPTH 1184     /* uint32: x87 registers in use */
#define REGS_MXCSR     1188     /* uint32 */
#define REGS_FPUCW     1192     /* uint16 */
#define REGS_WIDTH     1196     /* uint32, in: 0 SSE, 1 AVX, 2 AVX-512 */
#define REGS_MISALIGN  1200     /* uint32, in: call with %rsp = 8 mod 16 */
#define REGS_FUNCTION_ID 1208   /* in: pushed for the helper */
#define REGS_CALLER_SP 1216     /* in: pushed for the helper */
#define REGS_SIZE      1280

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
	unsigned char x87[2][16];
	uint32_t x87_depth;
	uint32_t mxcsr;
	uint16_t fpucw;
	uint16_t pad;
	uint32_t width;
	uint32_t misalign;
	uint32_t pad2;
	uint64_t function_id;
	uint64_t caller_sp;
} __attribute__((aligned(64)));

/* Loads *in, calls helper, stores every register into *out; out->width
 * says how much of the vector registers to capture. */
void fixture_call_helper(void (*helper)(void), const struct regs *in,
			 struct regs *out);
extern uint64_t fixture_rsp_at_call;   /* %rsp just before the call */

/* Instrumented functions for the C compiler to call with any prototype:
 * probe_enter runs the Enter helper (id probe_function) with the
 * arguments live, then returns; probe_leave loads probe_return into the
 * return registers, runs the Leave helper, then returns them. */
extern uintptr_t probe_function;
void probe_enter(void);
void probe_leave(void);
extern const char probe_enter_end[];
/* An empty instrumented function: Enter then Leave; and the same without. */
void probe_pair(void);
void probe_bare(void);

struct probe_return {
	uint64_t rax, rdx, rcx;
	unsigned char xmm0[16], xmm1[16];
	long double st[2];
	uint32_t x87_depth;
};
extern struct probe_return probe_return;
#endif

#define PROBE_RAX      0
#define PROBE_RDX      8
#define PROBE_RCX     16
#define PROBE_XMM0    24
#define PROBE_XMM1    40
#define PROBE_ST      64
#define PROBE_X87_DEPTH 96

#endif
