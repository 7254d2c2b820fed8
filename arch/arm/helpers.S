/*
 * 32-bit ARM helpers: elt_helper_enter, elt_helper_leave and
 * elt_helper_tailcall, called by instrumented code (doc/abi.md).  One
 * source for hard-float (AAPCS-VFP, armhf) and soft-float (base AAPCS,
 * armel), assembled as Thumb-2 or ARM code, whichever the compiler uses.
 *
 *   in:  on the stack, 8 bytes pushed before the bl: the function id at
 *        [sp], the caller SP (the SP before the call to the instrumented
 *        function: its first stack argument) at [sp, #4].  The helper
 *        removes both: it returns with sp 8 bytes above its entry value.
 *   out: r0-r12 and lr (the return address the bl wrote) unchanged; on
 *        hard-float also d0-d7 (s0-s15, q0-q3: every VFP argument and
 *        result register) at full width and FPSCR, restored whole.
 *        d8-d15 are callee-saved in C, so the C half keeps them.  Only the
 *        APSR condition flags may change, and on hard-float d16-d31 (never
 *        an argument or result, caller-saved).  Soft-float on a CPU with
 *        VFP: FPSCR restored whole too (glibc's fenv functions use it).
 *
 * The stack pointer at the call should be 8-byte aligned, as at any
 * public interface, but 4 mod 8 works too: the frame needs 4-byte
 * alignment and the helper aligns sp itself for the call into C.  r4
 * holds the frame (a frame pointer for the unwinders: .setfp for the EHABI
 * tables backtrace() reads, .cfi_def_cfa_register for debuggers), and
 * both describe the helper as popping the two stacked words, so they
 * unwind into the caller with the SP it has after the call returns.
 */
#include "asm.h"
#include "frame.h"
#include "hook.h"

	.text
#if !defined(__ARM_PCS_VFP)
	/* for FPSCR alone, used only when the CPU has VFP */
	.fpu	vfpv2
#endif

.macro HELPER name, hook
ELT_ENTRY(\name)
	.pad	#8                              /* the id and caller SP */
	.cfi_def_cfa_offset 8
	/* Idle (no plugin, or stopped): remove the caller's two words and
	 * return.  Every core register is preserved, so r0 is borrowed on
	 * the stack; its reload also releases the two words. */
	push	{r0}
	.cfi_adjust_cfa_offset 4
	.cfi_rel_offset r0, 0
	ldr	r0, .Larmed_offset\@
.Larmed_pc\@:
	add	r0, pc
	ldrb	r0, [r0]
	cmp	r0, #0
	bne	.Larmed\@
	.cfi_remember_state
	ldr	r0, [sp], #12
	.cfi_restore r0
	.cfi_adjust_cfa_offset -12
	bx	lr
	.cfi_restore_state
.Larmed\@:
	pop	{r0}
	.cfi_restore r0
	.cfi_adjust_cfa_offset -4
	push	{r0-r5, ip, lr}
	.save	{r0-r5, ip, lr}
	.cfi_adjust_cfa_offset 32
	.cfi_rel_offset r0, 0
	.cfi_rel_offset r1, 4
	.cfi_rel_offset r2, 8
	.cfi_rel_offset r3, 12
	.cfi_rel_offset r4, 16
	.cfi_rel_offset r5, 20
	.cfi_rel_offset ip, 24
	.cfi_rel_offset lr, 28
	sub	sp, sp, #ELT_ARM_RESERVE
	.pad	#ELT_ARM_RESERVE
	.cfi_adjust_cfa_offset ELT_ARM_RESERVE
	mov	r4, sp                          /* the frame */
	.setfp	r4, sp
	.cfi_def_cfa_register r4
	bic	r5, r4, #7                      /* AAPCS: 8-byte aligned for C */
	mov	sp, r5

	mov	r5, #\hook
	str	r5, [r4, #ELT_ARM_HOOK]
#if defined(__ARM_PCS_VFP)
	vmrs	r5, fpscr
	str	r5, [r4, #ELT_ARM_FPSCR]
	add	r5, r4, #ELT_ARM_VFP
	vstmia	r5, {d0-d7}
#else
	/* No VFP argument or result, but a CPU with VFP has an FPSCR that a
	 * plugin's fesetround changes: keep it too.  r5 holds "has VFP"
	 * across the call (callee-saved in C). */
	ldr	r5, .Lsoft_vfp_offset\@
.Lsoft_vfp_pc\@:
	add	r5, pc
	ldrb	r5, [r5]
	cmp	r5, #0
	beq	.Lsoft_saved\@
	vmrs	r0, fpscr
	str	r0, [r4, #ELT_ARM_FPSCR]
.Lsoft_saved\@:
#endif

	mov	r0, r4
	bl	elt_arm_dispatch

#if defined(__ARM_PCS_VFP)
	add	r5, r4, #ELT_ARM_VFP
	vldmia	r5, {d0-d7}
	ldr	r5, [r4, #ELT_ARM_FPSCR]
	vmsr	fpscr, r5
#else
	cmp	r5, #0
	beq	.Lsoft_restored\@
	ldr	r0, [r4, #ELT_ARM_FPSCR]
	vmsr	fpscr, r0
.Lsoft_restored\@:
#endif
	mov	sp, r4
	.cfi_def_cfa_register sp
	add	sp, sp, #ELT_ARM_RESERVE
	.cfi_adjust_cfa_offset -ELT_ARM_RESERVE
	pop	{r0-r5, ip, lr}
	.cfi_adjust_cfa_offset -32
	.cfi_restore r0
	.cfi_restore r1
	.cfi_restore r2
	.cfi_restore r3
	.cfi_restore r4
	.cfi_restore r5
	.cfi_restore ip
	.cfi_restore lr
	add	sp, sp, #8                      /* the caller's two words */
	.cfi_adjust_cfa_offset -8
	bx	lr

	/* elt_armed, pc-relative (hidden: no GOT); beside the code, as ARMv5TE
	 * has no movw/movt and a PIE no text relocations. */
	.p2align 2
.Larmed_offset\@:
	.word	elt_armed - (.Larmed_pc\@ + ELT_ARM_PC_BIAS)
#if !defined(__ARM_PCS_VFP)
.Lsoft_vfp_offset\@:
	.word	elt_arm_soft_vfp - (.Lsoft_vfp_pc\@ + ELT_ARM_PC_BIAS)
#endif
ELT_END(\name)
.endm

	ELT_LOCAL(elt_armed)
	ELT_LOCAL(elt_arm_dispatch)
#if !defined(__ARM_PCS_VFP)
	ELT_LOCAL(elt_arm_soft_vfp)
#endif

	HELPER	elt_helper_enter, ELT_HOOK_ENTER
	HELPER	elt_helper_leave, ELT_HOOK_LEAVE
	HELPER	elt_helper_tailcall, ELT_HOOK_TAILCALL

	ELT_OBJECT_NOTES
