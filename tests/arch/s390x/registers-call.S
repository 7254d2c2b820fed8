/*
 * s390x: call a helper with every register set from a struct regs and
 * capture every register after it; and regs_clobber.  Single-threaded.
 */
#include "asm.h"
#include "registers-s390x.h"

#define FRAME 320               /* save area, helper inputs, 128 bytes of */
#define CAPTURE 176             /* captured r0-r15 (aligned either way) */

	.bss
	.p2align 3
saved_r15:	.quad 0
helper_ptr:	.quad 0
out_ptr:	.quad 0
saved_fpc:	.quad 0
saved_f8_15:	.space 64

	.text
/* void regs_call(void (*helper)(void), const struct regs *in,
 *                struct regs *out) */
ELT_ENTRY(regs_call)
	stmg	%r6, %r15, 48(%r15)
	.cfi_offset %r6, -112
	.cfi_offset %r7, -104
	.cfi_offset %r8, -96
	.cfi_offset %r9, -88
	.cfi_offset %r10, -80
	.cfi_offset %r11, -72
	.cfi_offset %r12, -64
	.cfi_offset %r13, -56
	.cfi_offset %r14, -48
	.cfi_offset %r15, -40
	/* what the canaries overwrite and our caller expects back */
	larl	%r1, saved_r15
	stg	%r15, 0(%r1)
	larl	%r1, saved_fpc
	stfpc	0(%r1)
	larl	%r1, saved_f8_15
	.irp	n, 8, 9, 10, 11, 12, 13, 14, 15
	std	%f\n, (\n - 8) * 8(%r1)
	.endr
	larl	%r1, helper_ptr
	stg	%r2, 0(%r1)
	larl	%r1, out_ptr
	stg	%r4, 0(%r1)
	mvc	REGS_VECTOR(4, %r4), REGS_VECTOR(%r3)   /* capture what was loaded */

	/* %r15 = 0 mod 16, or 8 mod 16: the ABI only promises 8 */
	lay	%r15, -FRAME(%r15)
	nill	%r15, 0xfff0
	lt	%r0, REGS_MISALIGN(%r3)
	je	1f
	aghi	%r15, -8
1:	mvc	160(8, %r15), REGS_FUNCTION_ID(%r3)
	mvc	168(8, %r15), REGS_CALLER_SP(%r3)
	larl	%r1, regs_sp_at_call
	stg	%r15, 0(%r1)
	larl	%r1, regs_return_point
	larl	%r0, .Lreturn_point
	stg	%r0, 0(%r1)

	lt	%r0, REGS_VECTOR(%r3)
	je	.Lload_fpr
	.machine push
	.machine "z13"
	vlm	%v0, %v15, REGS_VEC(%r3)
	vlm	%v16, %v31, REGS_VEC + 16 * 16(%r3)
	.machine pop
	j	.Lloaded
.Lload_fpr:
	.irp	n, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15
	ld	%f\n, REGS_VEC + \n * 16(%r3)
	.endr
.Lloaded:
	lfpc	REGS_FPC(%r3)
	larl	%r14, helper_ptr
	lg	%r14, 0(%r14)
	lgr	%r1, %r3
	lmg	%r0, %r13, REGS_GPR(%r1)
	basr	%r14, %r14              /* branch address read before the link */
.Lreturn_point:
	stmg	%r0, %r15, CAPTURE(%r15)
	larl	%r1, out_ptr
	lg	%r1, 0(%r1)
	mvc	REGS_GPR(128, %r1), CAPTURE(%r15)
	stfpc	REGS_FPC(%r1)
	lt	%r0, REGS_VECTOR(%r1)
	je	.Lstore_fpr
	.machine push
	.machine "z13"
	vstm	%v0, %v15, REGS_VEC(%r1)
	vstm	%v16, %v31, REGS_VEC + 16 * 16(%r1)
	.machine pop
	j	.Lstored
.Lstore_fpr:
	.irp	n, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15
	std	%f\n, REGS_VEC + \n * 16(%r1)
	.endr
.Lstored:
	larl	%r1, saved_fpc
	lfpc	0(%r1)
	larl	%r1, saved_f8_15
	.irp	n, 8, 9, 10, 11, 12, 13, 14, 15
	ld	%f\n, (\n - 8) * 8(%r1)
	.endr
	larl	%r1, saved_r15
	lg	%r15, 0(%r1)
	lmg	%r6, %r15, 48(%r15)
	br	%r14
ELT_END(regs_call)

/* void regs_clobber(void): every caller-saved register that a helper
 * must preserve, as any C code may: r0-r5, f0-f7 (v0-v7 whole and
 * v16-v31 with the vector facility), and the FPC's rounding mode and
 * flags.  f8-f15 are callee-saved: a C function keeps them. */
ELT_ENTRY(regs_clobber)
	lghi	%r0, -1
	.irp	n, 1, 2, 3, 4, 5
	lgr	%r\n, %r0
	.endr
	larl	%r1, regs_vector
	lt	%r0, 0(%r1)
	je	1f
	.machine push
	.machine "z13"
	.irp	n, 0, 1, 2, 3, 4, 5, 6, 7, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31
	vrepib	%v\n, 0x5a
	.endr
	.machine pop
1:	.irp	n, 0, 2, 4, 6
	lzdr	%f\n
	.endr
	.irp	n, 1, 3, 5, 7
	lcdbr	%f\n, %f0
	.endr
	lghi	%r1, 0x00f8                     /* every IEEE flag... */
	sllg	%r1, %r1, 16
	oill	%r1, 0x0002                     /* ...rounding toward +infinity */
	sfpc	%r1
	lghi	%r0, -1
	lgr	%r1, %r0
	br	%r14
ELT_END(regs_clobber)

	.data
	.p2align 3
	.globl	regs_sp_at_call, regs_return_point
regs_sp_at_call:	.quad 0
regs_return_point:	.quad 0

	ELT_OBJECT_NOTES
