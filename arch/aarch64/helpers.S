/*
 * AArch64 (AAPCS64, Linux) helpers: elt_helper_enter, elt_helper_leave and
 * elt_helper_tailcall, called by instrumented code (doc/abi.md).
 *
 *   in:  16 bytes the caller reserved below its SP before the bl: the
 *        function id at [sp], the caller SP at [sp, #8].  The helper
 *        releases them: SP is 16 bytes higher when it returns.
 *        x29 is the instrumented function's frame record (its saved x29
 *        and x30): the return address elt_get_frame_info reports.
 *   out: x0-x8 unchanged (arguments, results, the continuation return x2,
 *        the indirect result location x8), q0-q7 unchanged at their full
 *        128 bits (z0-z7 at the full vector length and p0-p3 where the CPU
 *        has SVE: the SVE arguments and results), FPCR and FPSR unchanged,
 *        the callee-saved x19-x29 and d8-d15 unchanged (C code keeps
 *        them), x30 the return address of the bl.  Only x9-x18
 *        (temporaries: a PLT or veneer may clobber x16/x17 and the lazy
 *        resolver x9-x15 anyway), NZCV, v16-v31, the upper halves of
 *        v8-v15 (z8-z31 with SVE), p4-p15 and FFR may change.
 *
 * The helper builds a frame record, so x29 chains it to the instrumented
 * function, and describes every step with CFI: debuggers and backtrace()
 * unwind through it.  The CFA is the SP at the bl (the two words still
 * reserved), which is what the caller's own unwind rules at that bl
 * expect.
 */
#include "asm.h"
#include "frame.h"
#include "hook.h"

	.arch_extension sve     /* used only when the CPU has it */
	.text

.macro HELPER name, hook
	/* Not the base procedure call standard: the dynamic linker then binds
	 * calls to it at load time, never through the lazy resolver, which
	 * keeps only x0-x8 and q0-q7 (not z0-z7, p0-p3) live. */
	.variant_pcs \name
ELT_ENTRY(\name)
	/* Idle (no plugin, or stopped): release the caller's two words and
	 * return, touching only x9 (free here) and nothing the armed path
	 * needs signed or saved. */
	adrp	x9, elt_armed
	ldrb	w9, [x9, :lo12:elt_armed]
	cbnz	w9, 4f
	.cfi_remember_state
	add	sp, sp, #ELT_AARCH64_CALLER_WORDS
	.cfi_def_cfa_offset -ELT_AARCH64_CALLER_WORDS
	ret
	.cfi_restore_state
4:
	ELT_SIGN_LR                     /* with SP at entry as the modifier */
	stp	x29, x30, [sp, #-ELT_AARCH64_FRAME_SIZE]!
	.cfi_def_cfa_offset ELT_AARCH64_FRAME_SIZE
	.cfi_offset x29, -ELT_AARCH64_FRAME_SIZE + ELT_AARCH64_FP
	.cfi_offset x30, -ELT_AARCH64_FRAME_SIZE + ELT_AARCH64_LR
	mov	x29, sp
	.cfi_def_cfa_register x29

	stp	x0, x1, [sp, #ELT_AARCH64_X0]
	stp	x2, x3, [sp, #ELT_AARCH64_X0 + 16]
	stp	x4, x5, [sp, #ELT_AARCH64_X0 + 32]
	stp	x6, x7, [sp, #ELT_AARCH64_X0 + 48]
	str	x8, [sp, #ELT_AARCH64_X8]
	stp	q0, q1, [sp, #ELT_AARCH64_Q0]
	stp	q2, q3, [sp, #ELT_AARCH64_Q0 + 2 * ELT_AARCH64_Q_SLOT]
	stp	q4, q5, [sp, #ELT_AARCH64_Q0 + 4 * ELT_AARCH64_Q_SLOT]
	stp	q6, q7, [sp, #ELT_AARCH64_Q0 + 6 * ELT_AARCH64_Q_SLOT]
	mov	w9, #\hook
	str	w9, [sp, #ELT_AARCH64_HOOK]
	mrs	x9, fpcr
	mrs	x10, fpsr
	stp	x9, x10, [sp, #ELT_AARCH64_FPCR]

	/* SVE: z0-z7 whole and p0-p3 below the frame, 9 vector lengths (a
	 * predicate is an eighth of one), so SP stays 16-byte aligned.  C
	 * code is free to change their bits above 128: any AdvSIMD write or
	 * system call does. */
	adrp	x9, elt_aarch64_sve
	ldrb	w9, [x9, :lo12:elt_aarch64_sve]
	cbz	w9, 2f
	addvl	sp, sp, #-9
	.irp	n, 0, 1, 2, 3, 4, 5, 6, 7
	str	z\n, [sp, #\n, mul vl]
	.endr
	.irp	n, 0, 1, 2, 3
	str	p\n, [sp, #64 + \n, mul vl]
	.endr
2:
	mov	x0, x29                 /* the frame; SP is 16-byte aligned */
	bl	elt_aarch64_dispatch

	/* A plugin may have changed the rounding mode; writing FPCR can
	 * stall the pipeline, so only when it did. */
	ldp	x9, x10, [x29, #ELT_AARCH64_FPCR]
	mrs	x11, fpcr
	cmp	x11, x9
	b.eq	1f
	msr	fpcr, x9
1:	msr	fpsr, x10
	ldp	q0, q1, [x29, #ELT_AARCH64_Q0]
	ldp	q2, q3, [x29, #ELT_AARCH64_Q0 + 2 * ELT_AARCH64_Q_SLOT]
	ldp	q4, q5, [x29, #ELT_AARCH64_Q0 + 4 * ELT_AARCH64_Q_SLOT]
	ldp	q6, q7, [x29, #ELT_AARCH64_Q0 + 6 * ELT_AARCH64_Q_SLOT]
	ldp	x0, x1, [x29, #ELT_AARCH64_X0]
	ldp	x2, x3, [x29, #ELT_AARCH64_X0 + 16]
	ldp	x4, x5, [x29, #ELT_AARCH64_X0 + 32]
	ldp	x6, x7, [x29, #ELT_AARCH64_X0 + 48]
	ldr	x8, [x29, #ELT_AARCH64_X8]
	/* after the q registers, which zero the z bits above 128 */
	mov	x9, sp
	cmp	x9, x29
	b.eq	3f
	.irp	n, 0, 1, 2, 3, 4, 5, 6, 7
	ldr	z\n, [x9, #\n, mul vl]
	.endr
	.irp	n, 0, 1, 2, 3
	ldr	p\n, [x9, #64 + \n, mul vl]
	.endr
	mov	sp, x29
3:
	ldp	x29, x30, [sp], #ELT_AARCH64_FRAME_SIZE
	.cfi_def_cfa sp, 0
	.cfi_restore x29
	.cfi_restore x30
	ELT_AUTH_LR                     /* SP is back to what it was at entry */
	add	sp, sp, #ELT_AARCH64_CALLER_WORDS
	.cfi_def_cfa_offset -ELT_AARCH64_CALLER_WORDS
	ret
ELT_END(\name)
.endm

	ELT_LOCAL(elt_armed)
	ELT_LOCAL(elt_aarch64_dispatch)
	ELT_LOCAL(elt_aarch64_sve)

	HELPER	elt_helper_enter, ELT_HOOK_ENTER
	HELPER	elt_helper_leave, ELT_HOOK_LEAVE
	HELPER	elt_helper_tailcall, ELT_HOOK_TAILCALL

	ELT_OBJECT_NOTES
