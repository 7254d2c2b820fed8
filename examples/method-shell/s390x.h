/*
 * The method shell for s390x (see shell.h; the helper protocol is in
 * doc/abi.md): K in %r2, the arguments in %r3, %r4, extended to 64 bits by
 * the caller; the continuation return register is %r4.  Include "asm.h"
 * first.
 *
 * Body results: {int64, continuation} and {double, continuation} are 16
 * bytes, which s390x returns in memory, through a buffer whose address the
 * caller passes in %r2: the body's own arguments move up one register.  A
 * void body returns the continuation in %r2.
 */

/* The method's frame: the save area its callees may use, the helpers' two
 * inputs, then the body's result buffer. */
#define SHELL_HELPER_ID 160
#define SHELL_HELPER_SP 168
#define SHELL_RESULT    176
#define SHELL_FRAME     192

.macro SHELL_HELPER_ARGS name
	larl	%r1, \name              /* function id: the method's address */
	stg	%r1, SHELL_HELPER_ID(%r15)
	la	%r1, SHELL_FRAME(%r15)  /* caller SP: %r15 at our entry */
	stg	%r1, SHELL_HELPER_SP(%r15)
.endm

.macro SHELL_METHOD name, body, kind, clobbered
ELT_ENTRY(\name)
	stmg	%r6, %r15, 48(%r15)     /* %r14 lands at 112: the return address */
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
	lay	%r15, -SHELL_FRAME(%r15)
	.cfi_adjust_cfa_offset SHELL_FRAME

	SHELL_HELPER_ARGS \name
	brasl	%r14, elt_helper_enter@PLT      /* the arguments intact */

	.if \kind == SHELL_RET_VOID
	brasl	%r14, \body@PLT
	lgr	%r4, %r2
	.else
	lgr	%r5, %r4                /* the arguments move up one */
	lgr	%r4, %r3
	lgr	%r3, %r2
	la	%r2, SHELL_RESULT(%r15)
	brasl	%r14, \body@PLT
	lg	%r4, SHELL_RESULT + 8(%r15)
	.if \kind == SHELL_RET_INT
	lg	%r2, SHELL_RESULT(%r15)
	.else
	ld	%f0, SHELL_RESULT(%r15)
	.endif
	.endif
	ltgr	%r4, %r4
	jz	1f
	llihf	%r2, 0x5eed5eed         /* a suspension has no result */
	oilf	%r2, 0x5eed5eed
1:	lgr	%r7, %r4
	SHELL_HELPER_ARGS \name
	brasl	%r14, elt_helper_leave@PLT
	cgr	%r4, %r7
	je	2f
	larl	%r1, \clobbered
	lghi	%r0, 1
	laag	%r0, %r0, 0(%r1)        /* atomic add */
	lgr	%r4, %r7                /* keep running: the runtime reports it */
2:	lmg	%r6, %r15, SHELL_FRAME + 48(%r15)
	.cfi_restore %r6
	.cfi_restore %r7
	.cfi_restore %r8
	.cfi_restore %r9
	.cfi_restore %r10
	.cfi_restore %r11
	.cfi_restore %r12
	.cfi_restore %r13
	.cfi_restore %r14
	.cfi_restore %r15
	.cfi_def_cfa_offset 160
	br	%r14
ELT_END(\name)
.endm

/* void name(void (*method)(void) %r2, struct shell_call *call %r3) */
.macro SHELL_INVOKE name
ELT_ENTRY(\name)
	stmg	%r11, %r15, 88(%r15)
	.cfi_offset %r11, -72
	.cfi_offset %r12, -64
	.cfi_offset %r13, -56
	.cfi_offset %r14, -48
	.cfi_offset %r15, -40
	lay	%r15, -160(%r15)
	.cfi_adjust_cfa_offset 160
	lgr	%r11, %r3
	lgr	%r1, %r2
	lg	%r2, SHELL_CALL_CONTINUATION(%r11)
	lg	%r3, SHELL_CALL_ARGS(%r11)
	lg	%r4, SHELL_CALL_ARGS + 8(%r11)
	basr	%r14, %r1
	stg	%r2, SHELL_CALL_INT_RESULT(%r11)
	std	%f0, SHELL_CALL_DOUBLE_RESULT(%r11)
	stg	%r4, SHELL_CALL_CONTINUATION_OUT(%r11)
	lmg	%r11, %r15, 160 + 88(%r15)
	.cfi_restore %r11
	.cfi_restore %r12
	.cfi_restore %r13
	.cfi_restore %r14
	.cfi_restore %r15
	.cfi_def_cfa_offset 160
	br	%r14
ELT_END(\name)
.endm
