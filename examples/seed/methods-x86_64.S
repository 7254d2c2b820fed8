/*
 * The three methods as an x86-64 SysV JIT would emit them (doc/abi.md):
 * Enter in the prolog with the arguments live, the body, then Leave with
 * either the continuation in %rcx (suspension: %rax holds no result) or
 * the result in %rax / %xmm0 and %rcx = 0 (final return).
 *
 *   method(K continuation in %rdi, int32 n in %esi)
 *
 * After Leave each method checks that %rcx still holds the continuation:
 * a helper that clobbered it would make the runtime lose the method.
 */
#include "asm.h"

/* Body results: int bodies return {value, continuation} in %rax:%rdx,
 * double bodies {value, continuation} in %xmm0:%rax, void bodies the
 * continuation in %rax. */
#define RET_INT    0
#define RET_DOUBLE 1
#define RET_VOID   2

	.text
.macro METHOD name, body, ret
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
	call	\body                   /* uses %rdi, %rsi as Enter left them */

	.if \ret == RET_INT
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
	lock incq seed_continuation_clobbered(%rip)
	movq	%rbx, %rcx              /* keep running: the test reports it */
2:	popq	%r12
	popq	%rbx
	popq	%rbp
	.cfi_def_cfa %rsp, 8
	ret
ELT_END(\name)
.endm

	METHOD	seed_Work, seed_work_body, RET_INT
	METHOD	seed_WorkVoid, seed_work_void_body, RET_VOID
	METHOD	seed_WorkDouble, seed_work_double_body, RET_DOUBLE

/* The dispatcher's call into a method: C cannot read %rcx after a call.
 *   void seed_invoke(method, continuation, n, struct seed_outcome *out) */
ELT_ENTRY(seed_invoke)
	pushq	%rbx
	.cfi_adjust_cfa_offset 8
	.cfi_rel_offset %rbx, 0
	movq	%rcx, %rbx
	movq	%rdi, %rax
	movq	%rsi, %rdi
	movl	%edx, %esi
	call	*%rax
	movq	%rax, 0(%rbx)
	movsd	%xmm0, 8(%rbx)
	movq	%rcx, 16(%rbx)
	popq	%rbx
	.cfi_adjust_cfa_offset -8
	.cfi_restore %rbx
	ret
ELT_END(seed_invoke)

	ELT_OBJECT_NOTES
