/*
 * The method shell for x86-64 System V (see shell.h; the helper protocol
 * is in doc/abi.md): K in %rdi, the arguments in %rsi, %rdx; the
 * continuation return register is %rcx.  Include "asm.h" first.
 *
 * Body results: {int64, continuation} comes back in %rax:%rdx, {double,
 * continuation} in %xmm0:%rax, a void body's continuation in %rax.
 */

/* The method: a frame record, %rbx and %r12 saved (%rsp 16-aligned at the
 * body's call), the helpers' two stack words pushed before each call and
 * popped by the helper. */
.macro SHELL_METHOD name, body, kind, clobbered
ELT_ENTRY(\name)
	pushq	%rbp
	.cfi_adjust_cfa_offset 8
	.cfi_rel_offset %rbp, 0
	movq	%rsp, %rbp
	.cfi_def_cfa_register %rbp
	pushq	%rbx
	.cfi_offset %rbx, -24
	pushq	%r12
	.cfi_offset %r12, -32

	leaq	16(%rbp), %r11          /* caller SP */
	pushq	%r11
	leaq	\name(%rip), %r11       /* function id */
	pushq	%r11
	call	elt_helper_enter        /* pops both */
	call	\body                   /* the arguments as Enter left them */

	.if \kind == SHELL_RET_INT
	movq	%rdx, %rcx
	.else
	movq	%rax, %rcx
	.endif
	testq	%rcx, %rcx
	jz	1f
	movabsq	$0x5eed5eed5eed5eed, %rax       /* a suspension has no result */
1:	movq	%rcx, %rbx
	leaq	16(%rbp), %r11
	pushq	%r11
	leaq	\name(%rip), %r11
	pushq	%r11
	call	elt_helper_leave
	cmpq	%rcx, %rbx
	je	2f
	lock incq \clobbered(%rip)
	movq	%rbx, %rcx              /* keep running: the runtime reports it */
2:	popq	%r12
	popq	%rbx
	popq	%rbp
	.cfi_def_cfa %rsp, 8
	ret
ELT_END(\name)
.endm

/* void name(void (*method)(void) %rdi, struct shell_call *call %rsi) */
.macro SHELL_INVOKE name
ELT_ENTRY(\name)
	pushq	%rbx
	.cfi_adjust_cfa_offset 8
	.cfi_rel_offset %rbx, 0
	movq	%rsi, %rbx
	movq	%rdi, %rax
	movq	SHELL_CALL_CONTINUATION(%rbx), %rdi
	movq	SHELL_CALL_ARGS(%rbx), %rsi
	movq	SHELL_CALL_ARGS + 8(%rbx), %rdx
	call	*%rax
	movq	%rax, SHELL_CALL_INT_RESULT(%rbx)
	movsd	%xmm0, SHELL_CALL_DOUBLE_RESULT(%rbx)
	movq	%rcx, SHELL_CALL_CONTINUATION_OUT(%rbx)
	popq	%rbx
	.cfi_adjust_cfa_offset -8
	.cfi_restore %rbx
	ret
ELT_END(\name)
.endm
