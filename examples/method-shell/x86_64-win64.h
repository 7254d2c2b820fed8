/*
 * The method shell for x86-64 Windows, Microsoft x64 (see shell.h; the
 * helper protocol is in doc/abi.md): K in %rcx, the arguments in %rdx,
 * %r8; the continuation return register is %rcx.  Include "asm.h" first.
 *
 * Body results: {int64, continuation} and {double, continuation} are 16
 * bytes, which Win64 returns through memory: the caller passes the
 * buffer's address in %rcx and the arguments move up one register.  A
 * void body returns the continuation in %rax.
 */

/* The frame: %rbx pushed, then 48 bytes: the home area at 0(%rsp), the
 * result buffer at 32(%rsp).  The caller SP is 64(%rsp). */
#define SHELL_RESULT 32
#define SHELL_CALLER_SP 64

.macro SHELL_METHOD name, body, kind, clobbered
ELT_ENTRY(\name)
	pushq	%rbx
	.seh_pushreg %rbx
	subq	$48, %rsp
	.seh_stackalloc 48
	.seh_endprologue

	leaq	SHELL_CALLER_SP(%rsp), %r11
	pushq	%r11
	leaq	\name(%rip), %r11       /* function id */
	pushq	%r11
	call	elt_helper_enter        /* pops both */

	.if \kind == SHELL_RET_VOID
	call	\body                   /* the arguments as Enter left them */
	movq	%rax, %rcx
	.else
	movq	%r8, %r9                /* the arguments move up one */
	movq	%rdx, %r8
	movq	%rcx, %rdx
	leaq	SHELL_RESULT(%rsp), %rcx
	call	\body
	movq	SHELL_RESULT + 8(%rsp), %rcx
	.if \kind == SHELL_RET_INT
	movq	SHELL_RESULT(%rsp), %rax
	.else
	movsd	SHELL_RESULT(%rsp), %xmm0
	.endif
	.endif
	testq	%rcx, %rcx
	jz	1f
	movabsq	$0x5eed5eed5eed5eed, %rax       /* a suspension has no result */
1:	movq	%rcx, %rbx
	leaq	SHELL_CALLER_SP(%rsp), %r11
	pushq	%r11
	leaq	\name(%rip), %r11
	pushq	%r11
	call	elt_helper_leave
	cmpq	%rcx, %rbx
	je	2f
	lock incq \clobbered(%rip)
	movq	%rbx, %rcx              /* keep running: the runtime reports it */
2:	addq	$48, %rsp
	popq	%rbx
	ret
ELT_END(\name)
.endm

/* void name(void (*method)(void) %rcx, struct shell_call *call %rdx) */
.macro SHELL_INVOKE name
ELT_ENTRY(\name)
	pushq	%rbx
	.seh_pushreg %rbx
	subq	$32, %rsp               /* the method's home area */
	.seh_stackalloc 32
	.seh_endprologue
	movq	%rdx, %rbx
	movq	%rcx, %rax
	movq	SHELL_CALL_CONTINUATION(%rbx), %rcx
	movq	SHELL_CALL_ARGS(%rbx), %rdx
	movq	SHELL_CALL_ARGS + 8(%rbx), %r8
	call	*%rax
	movq	%rax, SHELL_CALL_INT_RESULT(%rbx)
	movsd	%xmm0, SHELL_CALL_DOUBLE_RESULT(%rbx)
	movq	%rcx, SHELL_CALL_CONTINUATION_OUT(%rbx)
	addq	$32, %rsp
	popq	%rbx
	ret
ELT_END(\name)
.endm
