/*
 * The register image registers-call.S loads before calling a helper and
 * stores after it.  Offsets are checked in registers.c.
 */
#ifndef ELT_TESTS_REGISTERS_RISCV64_H
#define ELT_TESTS_REGISTERS_RISCV64_H

#define REGS_X            0     /* x0-x31, 8 bytes each, by register number */
#define REGS_F          256     /* f0-f31, 8 bytes each (the full D register) */
#define REGS_FCSR       512     /* uint32 */
#define REGS_MISALIGN   516     /* uint32, in: call with sp = 8 mod 16 */
#define REGS_FUNCTION_ID 520    /* in: stored for the helper at 0(sp) */
#define REGS_CALLER_SP  528     /* in: stored for the helper at 8(sp) */
#define REGS_SIZE       576

/* Register numbers. */
#define RA 1
#define SP 2
#define GP 3
#define TP 4
#define T0 5
#define A0 10
#define A2 12

#ifndef __ASSEMBLER__
#include <stdint.h>

struct regs {
	uint64_t x[32];
	uint64_t f[32];
	uint32_t fcsr;
	uint32_t misalign;
	uint64_t function_id;
	uint64_t caller_sp;
} __attribute__((aligned(64)));

extern uint64_t regs_sp_at_call;        /* sp just before the 16 bytes were reserved */
extern const char regs_after_call[];    /* where the helper must return: ra after it */

#endif

#endif
