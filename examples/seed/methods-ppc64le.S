/*
 * The three methods as a ppc64le (ELFv2) JIT would emit them (doc/abi.md):
 * Enter in the prolog with the arguments live, the body, then Leave with
 * either the continuation in r5 (suspension: r3 holds no result) or the
 * result in r3 / f1 and r5 = 0 (final return).
 *
 *   method(K continuation in r3, int32 n in r4)
 *
 * After Leave each method checks that r5 still holds the continuation:
 * a helper that clobbered it would make the runtime lose the method.
 */
#include "asm.h"

/* Body results: every body returns a 16-byte struct {value, continuation}
 * in r3:r4 (ELFv2 returns aggregates up to 16 bytes in r3:r4, a double
 * member as its bits in r3), a void body the continuation in r3. */
#define RET_INT    0
#define RET_DOUBLE 1
#define RET_VOID   2

/* header 32, the parameter save area (the helper's inputs at 32 and 40),
 * r31 saved at 96 */
#define FRAME 112

	.text
.macro HELPER_ARGS name
	addi	%r11, %r1, FRAME                /* caller SP */
	std	%r11, 40(%r1)
	addis	%r11, %r2, \name@toc@ha         /* function id: our address */
	addi	%r11, %r11, \name@toc@l
	std	%r11, 32(%r1)
.endm

.macro METHOD name, body, ret
ELT_ENTRY(\name)
0:	addis	%r2, %r12, (.TOC. - 0b)@ha
	addi	%r2, %r2, (.TOC. - 0b)@l
	.localentry \name, . - \name
	mflr	%r0
	std	%r0, 16(%r1)
	.cfi_offset 65, 16
	std	%r31, -16(%r1)
	.cfi_offset 31, -16
	stdu	%r1, -FRAME(%r1)
	.cfi_adjust_cfa_offset FRAME

	HELPER_ARGS \name
	bl	elt_helper_enter
	nop
	bl	\body                   /* uses r3, r4 as Enter left them */
	nop

	.if \ret == RET_VOID
	mr	%r5, %r3
	.else
	mr	%r5, %r4
	.endif
	.if \ret == RET_DOUBLE
	mtvsrd	%vs1, %r3                /* the double result goes in f1 */
	.endif
	cmpdi	%r5, 0
	beq	1f
	lis	%r3, 0x5eed             /* a suspension has no result */
	ori	%r3, %r3, 0x5eed
1:	mr	%r31, %r5
	HELPER_ARGS \name
	bl	elt_helper_leave
	nop
	cmpd	%r5, %r31
	beq	3f
	addis	%r11, %r2, seed_continuation_clobbered@toc@ha
	addi	%r11, %r11, seed_continuation_clobbered@toc@l
2:	ldarx	%r12, 0, %r11
	addi	%r12, %r12, 1
	stdcx.	%r12, 0, %r11
	bne-	2b
	mr	%r5, %r31               /* keep running: the test reports it */
3:	addi	%r1, %r1, FRAME
	.cfi_adjust_cfa_offset -FRAME
	ld	%r0, 16(%r1)
	mtlr	%r0
	.cfi_restore 65
	ld	%r31, -16(%r1)
	.cfi_restore 31
	blr
ELT_END(\name)
.endm

	METHOD	seed_Work, seed_work_body, RET_INT
	METHOD	seed_WorkVoid, seed_work_void_body, RET_VOID
	METHOD	seed_WorkDouble, seed_work_double_body, RET_DOUBLE

/* The dispatcher's call into a method: C cannot read r5 after a call.
 *   void seed_invoke(method, continuation, n, struct seed_outcome *out) */
ELT_ENTRY(seed_invoke)
	mflr	%r0
	std	%r0, 16(%r1)
	.cfi_offset 65, 16
	std	%r31, -8(%r1)
	.cfi_offset 31, -8
	stdu	%r1, -48(%r1)
	.cfi_adjust_cfa_offset 48
	mr	%r31, %r6
	mr	%r12, %r3               /* a global entry wants its address in r12 */
	mtctr	%r12
	mr	%r3, %r4
	mr	%r4, %r5
	std	%r2, 24(%r1)
	bctrl
	ld	%r2, 24(%r1)
	std	%r3, 0(%r31)
	stfd	%f1, 8(%r31)
	std	%r5, 16(%r31)
	addi	%r1, %r1, 48
	.cfi_adjust_cfa_offset -48
	ld	%r0, 16(%r1)
	mtlr	%r0
	.cfi_restore 65
	ld	%r31, -8(%r1)
	.cfi_restore 31
	blr
ELT_END(seed_invoke)

	ELT_OBJECT_NOTES
