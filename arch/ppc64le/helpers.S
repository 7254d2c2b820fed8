/*
 * ppc64le (PowerPC64 ELFv2) helpers: elt_helper_enter, elt_helper_leave
 * and elt_helper_tailcall, called by instrumented code (doc/abi.md).
 *
 *   in:  in the caller's frame, at 32(r1) the function id and at 40(r1)
 *        the caller SP (r1 of the instrumented function's caller at its
 *        call).  The helper reads them and leaves them there; r1 is the
 *        same after the call, as a PLT stub's TOC reload wants.
 *   out: r0, r2-r12 unchanged (r3-r10 arguments, r3/r4 results, r5 the
 *        continuation return, r11 a static chain, r12 an entry address),
 *        vs0-vs13 at 128 bits (f0-f13 and the upper halves that alias
 *        them), v0 and v2-v13 at 128 bits, all of CR, ctr, xer, lr, the
 *        whole FPSCR and VSCR.  r14-r31, f14-f31, v20-v31 and cr2-cr4
 *        stay as the C callee keeps them.  Only v1, v14-v19 and the upper
 *        halves of vs14-vs31 (caller-saved, never an argument or result)
 *        may change.
 *
 * No register is an input, r12 included: the helper has a single entry
 * point and finds its own TOC pointer from its address (bcl), after
 * saving the caller's r2, so any kind of call reaches it with r2 intact.
 */
#include "asm.h"
#include "frame.h"
#include "hook.h"

	.text

.macro HELPER name, hook
ELT_ENTRY(\name)
	/* Idle (no plugin, or stopped): return at once.  Every register is
	 * preserved here, so r11 and r12 wait in the ABI's protected zone
	 * below r1, lr in r12 while bcl finds where this code is, and cr0
	 * (which the compare sets) in r12 after it. */
	std	%r11, -8(%r1)
	std	%r12, -16(%r1)
	mflr	%r12
	.cfi_register 65, 12
	bcl	20, 31, .Larmed_pc\@   /* the form that leaves the return predictor alone */
.Larmed_pc\@:
	mflr	%r11
	mtlr	%r12
	.cfi_restore 65
	addis	%r11, %r11, (elt_armed - .Larmed_pc\@)@ha
	lbz	%r11, (elt_armed - .Larmed_pc\@)@l(%r11)
	mfocrf	%r12, 0x80
	cmpwi	%r11, 0
	bne	.Larmed\@
	mtocrf	0x80, %r12
	ld	%r11, -8(%r1)
	ld	%r12, -16(%r1)
	blr
.Larmed\@:
	mtocrf	0x80, %r12
	ld	%r11, -8(%r1)
	ld	%r12, -16(%r1)
	stdu	%r1, -ELT_PPC64LE_FRAME_SIZE(%r1)
	.cfi_adjust_cfa_offset ELT_PPC64LE_FRAME_SIZE
	std	%r0, ELT_PPC64LE_GPR_AT(0)(%r1)
	mflr	%r0
	/* the ABI's LR save doubleword, in the caller's frame */
	std	%r0, ELT_PPC64LE_FRAME_SIZE + 16(%r1)
	.cfi_offset 65, 16
	.irp	n, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12
	std	%r\n, ELT_PPC64LE_GPR_AT(\n)(%r1)
	.endr
	addi	%r0, %r1, ELT_PPC64LE_FRAME_SIZE
	std	%r0, ELT_PPC64LE_GPR_AT(1)(%r1)
	mfcr	%r0
	stw	%r0, ELT_PPC64LE_CR(%r1)
	mfctr	%r0
	std	%r0, ELT_PPC64LE_CTR(%r1)
	mfxer	%r0
	std	%r0, ELT_PPC64LE_XER(%r1)
	ld	%r0, ELT_PPC64LE_FRAME_SIZE + ELT_PPC64LE_IN_FUNCTION_ID(%r1)
	std	%r0, ELT_PPC64LE_FUNCTION_ID(%r1)
	ld	%r0, ELT_PPC64LE_FRAME_SIZE + ELT_PPC64LE_IN_CALLER_SP(%r1)
	std	%r0, ELT_PPC64LE_CALLER_SP(%r1)
	li	%r0, \hook
	stw	%r0, ELT_PPC64LE_HOOK(%r1)

	/* vs0-vs13 whole: f0-f13 and the halves above them */
	.irp	n, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13
	li	%r12, ELT_PPC64LE_VSR_AT(\n)
	stxvd2x	%vs\n, %r1, %r12
	.endr
	/* v0 (scratch below) and the vector argument registers v2-v13 */
	.irp	n, 0, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13
	li	%r12, ELT_PPC64LE_VR_AT(\n)
	stvx	%v\n, %r1, %r12
	.endr
	/* FPRs hold a float in double format: keep a single for decoding */
	.irp	n, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13
	stfs	%f\n, ELT_PPC64LE_FS_AT(\n)(%r1)
	.endr
	mffs	%f0
	stfd	%f0, ELT_PPC64LE_FPSCR(%r1)
	mfvscr	%v0
	li	%r12, ELT_PPC64LE_VSCR
	stvx	%v0, %r1, %r12

	/* Our TOC pointer, for the C call: from where this code is. */
	bcl	20, 31, 1f
1:	mflr	%r12
	addis	%r2, %r12, (.TOC. - 1b)@ha
	addi	%r2, %r2, (.TOC. - 1b)@l
	mr	%r3, %r1
	bl	elt_ppc64le_dispatch
	nop

	li	%r12, ELT_PPC64LE_VSCR
	lvx	%v0, %r1, %r12
	mtvscr	%v0
	lfd	%f0, ELT_PPC64LE_FPSCR(%r1)
	mtfsf	0xff, %f0, 1, 0         /* L=1: all 64 bits */
	.irp	n, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13
	li	%r12, ELT_PPC64LE_VSR_AT(\n)
	lxvd2x	%vs\n, %r1, %r12
	.endr
	.irp	n, 0, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13
	li	%r12, ELT_PPC64LE_VR_AT(\n)
	lvx	%v\n, %r1, %r12
	.endr
	ld	%r0, ELT_PPC64LE_CTR(%r1)
	mtctr	%r0
	ld	%r0, ELT_PPC64LE_XER(%r1)
	mtxer	%r0
	lwz	%r0, ELT_PPC64LE_CR(%r1)
	mtcrf	0xff, %r0
	ld	%r0, ELT_PPC64LE_FRAME_SIZE + 16(%r1)
	mtlr	%r0
	.cfi_restore 65
	.irp	n, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12
	ld	%r\n, ELT_PPC64LE_GPR_AT(\n)(%r1)
	.endr
	ld	%r0, ELT_PPC64LE_GPR_AT(0)(%r1)
	addi	%r1, %r1, ELT_PPC64LE_FRAME_SIZE
	.cfi_adjust_cfa_offset -ELT_PPC64LE_FRAME_SIZE
	blr
ELT_END(\name)
.endm

	ELT_LOCAL(elt_armed)
	ELT_LOCAL(elt_ppc64le_dispatch)

	HELPER	elt_helper_enter, ELT_HOOK_ENTER
	HELPER	elt_helper_leave, ELT_HOOK_LEAVE
	HELPER	elt_helper_tailcall, ELT_HOOK_TAILCALL

	ELT_OBJECT_NOTES
