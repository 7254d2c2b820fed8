/*
 * The three methods as an i386 System V JIT would emit them (doc/abi.md):
 * Enter in the prolog with the arguments live, the body, then Leave with
 * either the continuation in %ecx (suspension: %eax/%edx hold no result)
 * or the result in %edx:%eax / st0 and %ecx = 0 (final return).
 *
 *   method(K continuation, int32 n): cdecl, both on the stack
 *
 * After Leave each method checks that %ecx still holds the continuation:
 * a helper that clobbered it would make the runtime lose the method.
 * Position independent: %ebx holds the GOT.
 */
#include "asm.h"

/* Body results.  Linux i386 returns every struct in memory: the int and
 * double bodies ({value, continuation}, 12 bytes each, the continuation at
 * offset 8) write through a hidden pointer passed first, which they pop
 * (ret $4).  Void bodies return the continuation in %eax. */
#define RET_INT    0
#define RET_DOUBLE 1
#define RET_VOID   2

/* Frame, below the saved %ebp: %ebx, %esi, %edi, the body's result, then
 * the outgoing arguments at %esp = %ebp - 56 (16-aligned for the C body
 * when the method's caller was). */
#define RESULT   -32
#define FRAME     44

	.text
	.p2align 4
	.type	seed_pc_thunk_bx, %function
seed_pc_thunk_bx:
	.cfi_startproc
	movl	(%esp), %ebx
	ret
	.cfi_endproc
	.size	seed_pc_thunk_bx, . - seed_pc_thunk_bx

/* Pushes the caller SP (%ebp + 8: the first argument, above the return
 * address) without a register, then the function id kept in %edi. */
.macro PUSH_HELPER_ARGS
	pushl	%ebp
	addl	$8, (%esp)
	pushl	%edi
.endm

.macro METHOD name, body, ret
ELT_ENTRY(\name)
	pushl	%ebp
	.cfi_adjust_cfa_offset 4
	.cfi_rel_offset %ebp, 0
	movl	%esp, %ebp
	.cfi_def_cfa_register %ebp
	pushl	%ebx
	.cfi_offset %ebx, -12
	pushl	%esi
	.cfi_offset %esi, -16
	pushl	%edi
	.cfi_offset %edi, -20
	subl	$FRAME, %esp
	call	seed_pc_thunk_bx
	addl	$_GLOBAL_OFFSET_TABLE_, %ebx
	leal	\name@GOTOFF(%ebx), %edi        /* function id */

	PUSH_HELPER_ARGS
	call	elt_helper_enter@PLT    /* pops both */

	/* the body, with the arguments the method was given */
	movl	8(%ebp), %ecx           /* K */
	movl	12(%ebp), %eax          /* n */
	.if \ret == RET_VOID
	movl	%ecx, 0(%esp)
	movl	%eax, 4(%esp)
	call	\body@PLT
	movl	%eax, %ecx
	.else
	leal	RESULT(%ebp), %edx
	movl	%edx, 0(%esp)
	movl	%ecx, 4(%esp)
	movl	%eax, 8(%esp)
	call	\body@PLT
	subl	$4, %esp                /* the body popped its result pointer */
	movl	RESULT + 8(%ebp), %ecx
	.if \ret == RET_INT
	movl	RESULT(%ebp), %eax
	movl	RESULT + 4(%ebp), %edx
	testl	%ecx, %ecx
	jz	1f
	movl	$0x5eed5eed, %eax       /* a suspension has no result */
	movl	%eax, %edx
1:
	.else
	fldl	RESULT(%ebp)            /* st0, as the ABI returns a double */
	.endif
	.endif

	movl	%ecx, %esi
	PUSH_HELPER_ARGS
	call	elt_helper_leave@PLT
	cmpl	%ecx, %esi
	je	2f
	lock incl seed_continuation_clobbered@GOTOFF(%ebx)
	movl	%esi, %ecx              /* keep running: the test reports it */
2:	movl	-4(%ebp), %ebx
	.cfi_restore %ebx
	movl	-8(%ebp), %esi
	.cfi_restore %esi
	movl	-12(%ebp), %edi
	.cfi_restore %edi
	leave
	.cfi_def_cfa %esp, 4
	.cfi_restore %ebp
	ret
ELT_END(\name)
.endm

	METHOD	seed_Work, seed_work_body, RET_INT
	METHOD	seed_WorkVoid, seed_work_void_body, RET_VOID
	METHOD	seed_WorkDouble, seed_work_double_body, RET_DOUBLE

/* The dispatcher's call into a method: C cannot read %ecx after a call,
 * nor know whether st0 holds a result.
 *   void seed_invoke(method, continuation, n, struct outcome *out)
 * struct outcome: int64 at 0 (edx:eax), double at 8 (st0 if the method
 * left one, else 0), continuation at 16 (ecx). */
ELT_ENTRY(seed_invoke)
	pushl	%ebp
	.cfi_adjust_cfa_offset 4
	.cfi_rel_offset %ebp, 0
	movl	%esp, %ebp
	.cfi_def_cfa_register %ebp
	pushl	%esi
	.cfi_offset %esi, -12
	subl	$8, %esp                /* 16-aligned after the two pushes */
	pushl	16(%ebp)                /* n */
	pushl	12(%ebp)                /* continuation */
	call	*8(%ebp)
	addl	$8, %esp
	movl	20(%ebp), %esi
	movl	%eax, 0(%esi)
	movl	%edx, 4(%esi)
	movl	%ecx, 16(%esi)
	fxam                            /* an empty st0: C3=1, C2=0, C0=1 */
	fnstsw	%ax
	andw	$0x4500, %ax
	cmpw	$0x4100, %ax
	je	1f
	fstpl	8(%esi)
	jmp	2f
1:	movl	$0, 8(%esi)
	movl	$0, 12(%esi)
2:	movl	-4(%ebp), %esi
	.cfi_restore %esi
	leave
	.cfi_def_cfa %esp, 4
	.cfi_restore %ebp
	ret
ELT_END(seed_invoke)

	ELT_OBJECT_NOTES
