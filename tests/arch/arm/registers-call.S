/*
 * 32-bit ARM: call a helper with every register set from a struct regs
 * and capture every register after it.  Single-threaded.
 */
#include "asm.h"
#include "registers-arm.h"

/* regs_call's own state, at fixed offsets from `state`. */
#define OUT             0
#define SAVED_SP        4
#define SAVED_FPSCR     8

	.bss
	.p2align 3
state:	.space 16

	.text
/* void regs_call(void (*helper)(void), const struct regs *in,
 *                struct regs *out) */
ELT_ENTRY(regs_call)
	/* Every register holds a canary during the call, so no unwinder
	 * can follow this function: say so rather than describe it wrong. */
	.cantunwind
	push	{r4-r11, lr}
	.cfi_adjust_cfa_offset 36
	sub	sp, sp, #4                      /* 8-byte aligned again */
	.cfi_adjust_cfa_offset 4
#if defined(__ARM_PCS_VFP)
	vpush	{d8-d15}
	.cfi_adjust_cfa_offset 64
#endif
	elt_arm_address r4, state
	str	r2, [r4, #OUT]
	mov	r5, sp
	str	r5, [r4, #SAVED_SP]
	ldr	r5, [r1, #REGS_MISALIGN]
	cmp	r5, #0
	beq	1f
	sub	sp, sp, #4                      /* the helper must cope */
1:
#if defined(__ARM_PCS_VFP)
	vmrs	r5, fpscr
	str	r5, [r4, #SAVED_FPSCR]
	ldr	r5, [r1, #REGS_FPSCR]
	vmsr	fpscr, r5
	add	r5, r1, #REGS_D
	vldmia	r5, {d0-d15}
#endif
	elt_arm_address r6, .Lreturn
#if defined(__thumb2__)         /* asm.h: this code is Thumb exactly then */
	orr	r6, r6, #1                      /* what blx leaves in lr */
#endif
	elt_arm_address r5, regs_return_address
	str	r6, [r5]
	mov	r6, sp
	elt_arm_address r5, regs_sp_at_call
	str	r6, [r5]

	ldr	r5, [r1, #REGS_FUNCTION_ID]
	ldr	r6, [r1, #REGS_CALLER_SP]
	push	{r5, r6}                        /* [sp] id, [sp, #4] caller SP */
	mov	lr, r0
	ldm	r1, {r0-r12}
	blx	lr
.Lreturn:
	/* Free some registers without touching any: push them all. */
	push	{r0-r12, lr}
	elt_arm_address r4, state
	ldr	r5, [r4, #OUT]
	mov	r6, sp
	mov	r0, #0
2:	ldr	r1, [r6, r0, lsl #2]            /* r0-r12 */
	str	r1, [r5, r0, lsl #2]
	add	r0, r0, #1
	cmp	r0, #13
	bne	2b
	ldr	r1, [r6, #13 * 4]
	str	r1, [r5, #REGS_R + LR * 4]
	add	r1, r6, #14 * 4                 /* sp as the helper left it */
	str	r1, [r5, #REGS_R + SP * 4]
#if defined(__ARM_PCS_VFP)
	add	r1, r5, #REGS_D
	vstmia	r1, {d0-d15}
	vmrs	r1, fpscr
	str	r1, [r5, #REGS_FPSCR]
	ldr	r1, [r4, #SAVED_FPSCR]
	vmsr	fpscr, r1
#endif

	ldr	r1, [r4, #SAVED_SP]
	mov	sp, r1
#if defined(__ARM_PCS_VFP)
	vpop	{d8-d15}
	.cfi_adjust_cfa_offset -64
#endif
	add	sp, sp, #4
	.cfi_adjust_cfa_offset -4
	pop	{r4-r11, pc}
ELT_END(regs_call)

/* void regs_clobber(void): every caller-saved register, as C may: r0-r3,
 * ip, lr, and on hard-float d0-d7 and what C may change in FPSCR (the
 * condition flags, QC and the cumulative exception bits: AAPCS 5.1.2.2). */
ELT_ENTRY(regs_clobber)
	.cantunwind
	mov	ip, lr
	mvn	r0, #0
#if defined(__ARM_PCS_VFP)
	vmov	d0, r0, r0
	vmov	d1, r0, r0
	vmov	d2, r0, r0
	vmov	d3, r0, r0
	vmov	d4, r0, r0
	vmov	d5, r0, r0
	vmov	d6, r0, r0
	vmov	d7, r0, r0
	vmrs	r1, fpscr
	eor	r1, r1, #0xf8000000
	eor	r1, r1, #0x9f
	vmsr	fpscr, r1
#endif
	mov	r1, r0
	mov	r2, r0
	mov	r3, r0
	mov	lr, r0
	bx	ip                              /* ip: the return address */
ELT_END(regs_clobber)

	.data
	.p2align 2
	.globl	regs_sp_at_call, regs_return_address
regs_sp_at_call:	.word 0
regs_return_address:	.word 0

	ELT_OBJECT_NOTES
