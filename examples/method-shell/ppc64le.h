/*
 * The method shell for ppc64le, ELFv2 (see shell.h; the helper protocol
 * is in doc/abi.md): K in r3, the arguments in r4, r5; the continuation
 * return register is r5.  Include "asm.h" first.
 *
 * Body results: ELFv2 returns an aggregate of up to 16 bytes in r3:r4, so
 * {int64, continuation} and {double, continuation} come back there (the
 * double's bits in r3); a void body's continuation in r3.
 */

/* header 32, the parameter save area (the helpers' inputs at 32 and 40),
 * r31 saved at 96 */
#define SHELL_FRAME 112

.macro SHELL_HELPER_ARGS name
	addi	%r11, %r1, SHELL_FRAME          /* caller SP */
	std	%r11, 40(%r1)
	addis	%r11, %r2, \name@toc@ha         /* function id: our address */
	addi	%r11, %r11, \name@toc@l
	std	%r11, 32(%r1)
.endm

.macro SHELL_METHOD name, body, kind, clobbered
ELT_ENTRY(\name)
0:	addis	%r2, %r12, (.TOC. - 0b)@ha
	addi	%r2, %r2, (.TOC. - 0b)@l
	.localentry \name, . - \name
	mflr	%r0
	std	%r0, 16(%r1)
	.cfi_offset 65, 16
	std	%r31, -16(%r1)
	.cfi_offset 31, -16
	stdu	%r1, -SHELL_FRAME(%r1)
	.cfi_adjust_cfa_offset SHELL_FRAME

	SHELL_HELPER_ARGS \name
	bl	elt_helper_enter
	nop
	bl	\body                   /* the arguments as Enter left them */
	nop

	.if \kind == SHELL_RET_VOID
	mr	%r5, %r3
	.else
	mr	%r5, %r4
	.endif
	.if \kind == SHELL_RET_DOUBLE
	mtvsrd	%vs1, %r3               /* the double result goes in f1 */
	.endif
	cmpdi	%r5, 0
	beq	1f
	lis	%r3, 0x5eed             /* a suspension has no result */
	ori	%r3, %r3, 0x5eed
1:	mr	%r31, %r5
	SHELL_HELPER_ARGS \name
	bl	elt_helper_leave
	nop
	cmpd	%r5, %r31
	beq	3f
	addis	%r11, %r2, \clobbered@toc@ha
	addi	%r11, %r11, \clobbered@toc@l
2:	ldarx	%r12, 0, %r11
	addi	%r12, %r12, 1
	stdcx.	%r12, 0, %r11
	bne-	2b
	mr	%r5, %r31               /* keep running: the runtime reports it */
3:	addi	%r1, %r1, SHELL_FRAME
	.cfi_adjust_cfa_offset -SHELL_FRAME
	ld	%r0, 16(%r1)
	mtlr	%r0
	.cfi_restore 65
	ld	%r31, -16(%r1)
	.cfi_restore 31
	blr
ELT_END(\name)
.endm

/* void name(void (*method)(void) r3, struct shell_call *call r4) */
.macro SHELL_INVOKE name
ELT_ENTRY(\name)
	mflr	%r0
	std	%r0, 16(%r1)
	.cfi_offset 65, 16
	std	%r31, -8(%r1)
	.cfi_offset 31, -8
	stdu	%r1, -48(%r1)
	.cfi_adjust_cfa_offset 48
	mr	%r31, %r4
	mr	%r12, %r3               /* a global entry wants its address in r12 */
	mtctr	%r12
	ld	%r3, SHELL_CALL_CONTINUATION(%r31)
	ld	%r4, SHELL_CALL_ARGS(%r31)
	ld	%r5, SHELL_CALL_ARGS + 8(%r31)
	std	%r2, 24(%r1)
	bctrl
	ld	%r2, 24(%r1)
	std	%r3, SHELL_CALL_INT_RESULT(%r31)
	stfd	%f1, SHELL_CALL_DOUBLE_RESULT(%r31)
	std	%r5, SHELL_CALL_CONTINUATION_OUT(%r31)
	addi	%r1, %r1, 48
	.cfi_adjust_cfa_offset -48
	ld	%r0, 16(%r1)
	mtlr	%r0
	.cfi_restore 65
	ld	%r31, -8(%r1)
	.cfi_restore 31
	blr
ELT_END(\name)
.endm
