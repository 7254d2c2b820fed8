/*
 * The three methods as an x86-64 Windows JIT would emit them (doc/abi.md):
 * Enter in the prolog with the arguments live, the body, then Leave with
 * either the continuation in %rcx (suspension: %rax holds no result) or
 * the result in %rax / %xmm0 and %rcx = 0 (final return).
 *
 *   method(K continuation in %rcx, int32 n in %edx)
 *
 * After Leave each method checks that %rcx still holds the continuation:
 * a helper that clobbered it would make the runtime lose the method.
 */
#include "asm.h"

/* Body results: the int and double bodies return a 16-byte struct
 * {value, continuation}, which Win64 passes through memory: the caller
 * gives the buffer's address in %rcx (the arguments move up one slot)
 * and reads the fields after; void bodies return the continuation in %rax. */
#define RET_INT    0
#define RET_DOUBLE 1
#define RET_VOID   2

/* The frame: %rbx pushed, then 48 bytes: the home area at 0(%rsp), the
 * result buffer at 32(%rsp).  The caller SP is 64(%rsp). */
#define RESULT 32
#define CALLER_SP 64

	.text
.macro METHOD name, body, ret
ELT_ENTRY(\name)
	pushq	%rbx
	.seh_pushreg %rbx
	subq	$48, %rsp
	.seh_stackalloc 48
	.seh_endprologue

	leaq	CALLER_SP(%rsp), %r11
	pushq	%r11
	leaq	\name(%rip), %r11       /* function id */
	pushq	%r11
	call	elt_helper_enter        /* pops both */

	.if \ret == RET_VOID
	call	\body                   /* %rcx, %edx as Enter left them */
	movq	%rax, %rcx
	.else
	movl	%edx, %r8d
	movq	%rcx, %rdx
	leaq	RESULT(%rsp), %rcx
	call	\body
	movq	RESULT + 8(%rsp), %rcx
	.if \ret == RET_INT
	movq	RESULT(%rsp), %rax
	.else
	movsd	RESULT(%rsp), %xmm0
	.endif
	.endif
	testq	%rcx, %rcx
	jz	1f
	movabsq	$0x5eed5eed5eed5eed, %rax       /* a suspension has no result */
1:	movq	%rcx, %rbx
	leaq	CALLER_SP(%rsp), %r11
	pushq	%r11
	leaq	\name(%rip), %r11
	pushq	%r11
	call	elt_helper_leave
	cmpq	%rcx, %rbx
	je	2f
	lock incq seed_continuation_clobbered(%rip)
	movq	%rbx, %rcx              /* keep running: the test reports it */
2:	addq	$48, %rsp
	popq	%rbx
	ret
ELT_END(\name)
.endm

	METHOD	seed_Work, seed_work_body, RET_INT
	METHOD	seed_WorkVoid, seed_work_void_body, RET_VOID
	METHOD	seed_WorkDouble, seed_work_double_body, RET_DOUBLE

/* The dispatcher's call into a method: C cannot read %rcx after a call.
 *   void seed_invoke(method %rcx, continuation %rdx, n %r8d,
 *                    struct seed_outcome *out %r9) */
ELT_ENTRY(seed_invoke)
	pushq	%rbx
	.seh_pushreg %rbx
	subq	$32, %rsp               /* the method's home area */
	.seh_stackalloc 32
	.seh_endprologue
	movq	%r9, %rbx
	movq	%rcx, %rax
	movq	%rdx, %rcx
	movl	%r8d, %edx
	call	*%rax
	movq	%rax, 0(%rbx)
	movsd	%xmm0, 8(%rbx)
	movq	%rcx, 16(%rbx)
	addq	$32, %rsp
	popq	%rbx
	ret
ELT_END(seed_invoke)

	ELT_OBJECT_NOTES
