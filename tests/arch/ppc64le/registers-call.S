/*
 * ppc64le: call a helper with every register set from a struct regs and
 * capture every register after it.  Single-threaded.
 *
 * The call is made as instrumented code makes it (doc/abi.md): function
 * id and caller SP at 32(r1) and 40(r1), r1 quadword aligned.  It goes
 * through blrl, so that ctr, r12 and every other register can hold a
 * canary: the helper must need none of them.
 */
#include "asm.h"
#include "registers-ppc64le.h"

/* regs_call's own frame: the header, then what it must keep for its
 * caller (r2, CR, r14-r31, f14-f31, v20-v31) and FPSCR/VSCR as they were. */
#define SAVE_R2       32
#define SAVE_CR       40
#define SAVE_FPSCR    48
#define SAVE_GPR      56        /* r14..r31 */
#define SAVE_FPR     200        /* f14..f31 */
#define SAVE_VSCR    352
#define SAVE_VR      368        /* v20..v31 */
#define SAVE_SIZE    560

/* The frame current at the helper call. */
#define CALL_ID       32        /* the helper's inputs */
#define CALL_SP       40
#define CALL_OUT      48        /* struct regs *out */
#define CALL_R31      56        /* r31 after the call, while r31 points to out */
#define CALL_SIZE    512        /* room below SAVE before aligning down */

	.text
/* void regs_call(void (*helper)(void), const struct regs *in,
 *                struct regs *out) */
ELT_ENTRY(regs_call)
0:	addis	%r2, %r12, (.TOC. - 0b)@ha
	addi	%r2, %r2, (.TOC. - 0b)@l
	.localentry regs_call, . - regs_call
	mflr	%r0
	std	%r0, 16(%r1)
	.cfi_offset 65, 16
	stdu	%r1, -SAVE_SIZE(%r1)
	.cfi_adjust_cfa_offset SAVE_SIZE
	std	%r2, SAVE_R2(%r1)
	mfcr	%r0
	std	%r0, SAVE_CR(%r1)
	.irp	n, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31
	std	%r\n, SAVE_GPR + 8 * (\n - 14)(%r1)
	stfd	%f\n, SAVE_FPR + 8 * (\n - 14)(%r1)
	.endr
	.irp	n, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31
	addi	%r6, %r1, SAVE_VR + 16 * (\n - 20)
	stvx	%v\n, 0, %r6
	.endr
	mffs	%f0
	stfd	%f0, SAVE_FPSCR(%r1)
	mfvscr	%v0
	addi	%r6, %r1, SAVE_VSCR
	stvx	%v0, 0, %r6

	/* The call frame: r1 = 0 or 16 mod 64, back chain to ours. */
	lwz	%r6, REGS_MISALIGN(%r4)
	addi	%r7, %r1, -CALL_SIZE
	clrrdi	%r7, %r7, 6
	sldi	%r6, %r6, 4
	add	%r7, %r7, %r6
	std	%r1, 0(%r7)
	mr	%r1, %r7
	ld	%r6, REGS_FUNCTION_ID(%r4)
	std	%r6, CALL_ID(%r1)
	ld	%r6, REGS_CALLER_SP(%r4)
	std	%r6, CALL_SP(%r1)
	std	%r5, CALL_OUT(%r1)
	std	%r1, REGS_SP_AT_CALL(%r5)
	std	%r13, REGS_R13_AT_CALL(%r5)
	bcl	20, 31, 1f
1:	mflr	%r6
	addi	%r6, %r6, .Lreturn - 1b
	std	%r6, REGS_LR_EXPECTED(%r5)

	/* Special registers, then the vector-scalar file, then the GPRs with
	 * r4 (the struct) last. */
	mtlr	%r3
	ld	%r0, REGS_CTR(%r4)
	mtctr	%r0
	ld	%r0, REGS_XER(%r4)
	mtxer	%r0
	lfd	%f0, REGS_FPSCR(%r4)
	mtfsf	0xff, %f0, 1, 0
	addi	%r6, %r4, REGS_VSCR
	lvx	%v0, 0, %r6
	mtvscr	%v0
	ld	%r0, REGS_CR(%r4)
	mtcrf	0xff, %r0
	.irp	n, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31
	li	%r6, REGS_VSR + 16 * \n
	lxvd2x	%vs\n, %r4, %r6
	.endr
	.irp	n, 32, 33, 34, 35, 36, 37, 38, 39, 40, 41, 42, 43, 44, 45, 46, 47, 48, 49, 50, 51, 52, 53, 54, 55, 56, 57, 58, 59, 60, 61, 62, 63
	li	%r6, REGS_VSR + 16 * \n
	lxvd2x	%vs\n, %r4, %r6
	.endr
	.irp	n, 0, 2, 3, 5, 6, 7, 8, 9, 10, 11, 12, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31
	ld	%r\n, REGS_GPR + 8 * \n(%r4)
	.endr
	ld	%r4, REGS_GPR + 8 * 4(%r4)

	blrl
.Lreturn:
	std	%r31, CALL_R31(%r1)
	ld	%r31, CALL_OUT(%r1)
	.irp	n, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30
	std	%r\n, REGS_GPR + 8 * \n(%r31)
	.endr
	ld	%r30, CALL_R31(%r1)
	std	%r30, REGS_GPR + 8 * 31(%r31)
	mflr	%r0
	std	%r0, REGS_LR(%r31)
	mfctr	%r0
	std	%r0, REGS_CTR(%r31)
	mfxer	%r0
	std	%r0, REGS_XER(%r31)
	mfcr	%r0
	std	%r0, REGS_CR(%r31)
	.irp	n, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31
	li	%r30, REGS_VSR + 16 * \n
	stxvd2x	%vs\n, %r31, %r30
	.endr
	.irp	n, 32, 33, 34, 35, 36, 37, 38, 39, 40, 41, 42, 43, 44, 45, 46, 47, 48, 49, 50, 51, 52, 53, 54, 55, 56, 57, 58, 59, 60, 61, 62, 63
	li	%r30, REGS_VSR + 16 * \n
	stxvd2x	%vs\n, %r31, %r30
	.endr
	mffs	%f0
	stfd	%f0, REGS_FPSCR(%r31)
	mfvscr	%v0
	addi	%r30, %r31, REGS_VSCR
	stvx	%v0, 0, %r30

	/* Back to our frame (the call frame's back chain) and the caller's
	 * registers. */
	ld	%r1, 0(%r1)
	lfd	%f0, SAVE_FPSCR(%r1)
	mtfsf	0xff, %f0, 1, 0
	addi	%r6, %r1, SAVE_VSCR
	lvx	%v0, 0, %r6
	mtvscr	%v0
	.irp	n, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31
	addi	%r6, %r1, SAVE_VR + 16 * (\n - 20)
	lvx	%v\n, 0, %r6
	.endr
	.irp	n, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31
	ld	%r\n, SAVE_GPR + 8 * (\n - 14)(%r1)
	lfd	%f\n, SAVE_FPR + 8 * (\n - 14)(%r1)
	.endr
	ld	%r0, SAVE_CR(%r1)
	mtcrf	0xff, %r0
	ld	%r2, SAVE_R2(%r1)
	addi	%r1, %r1, SAVE_SIZE
	.cfi_adjust_cfa_offset -SAVE_SIZE
	ld	%r0, 16(%r1)
	mtlr	%r0
	.cfi_restore 65
	blr
ELT_END(regs_call)

	ELT_OBJECT_NOTES
