/*
 * x86-64 System V helpers: elt_helper_enter, elt_helper_leave and
 * elt_helper_tailcall, called by instrumented code (doc/abi.md).
 *
 *   in:  on the stack, pushed in this order before the call: the caller SP
 *        (the SP before the call to the instrumented function: its first
 *        stack argument), then the function id.  The helper pops both.
 *   out: every general register unchanged, xmm0-7
 *        unchanged at their full width (ymm on AVX, zmm on AVX-512), and on
 *        Leave the x87 st0/st1 a long double result lives in.  Only the
 *        arithmetic flags and the vector registers that carry nothing here
 *        (8-31, k0-7: caller-saved in the ABI) may change.
 *
 * The stack pointer at the call need not be aligned: the helper aligns its
 * own frame (and keeps %rbp as a frame pointer, described by CFI, so
 * debuggers and backtrace() unwind through it).
 */
#include "asm.h"
#include "frame.h"
#include "hook.h"

	.text

/* Vector argument/return registers at the width this CPU has. */
.macro SAVE_VECTORS
	movzbl	elt_x86_64_vector_width(%rip), %eax
	cmpl	$ELT_X86_64_VEC_AVX, %eax
	je	.Lsave_avx\@
	ja	.Lsave_avx512\@
	.irp	n, 0, 1, 2, 3, 4, 5, 6, 7
	movdqa	%xmm\n, ELT_X86_64_VEC + \n * ELT_X86_64_VEC_SLOT(%rsp)
	.endr
	jmp	.Lsaved\@
.Lsave_avx\@:
	.irp	n, 0, 1, 2, 3, 4, 5, 6, 7
	vmovdqa	%ymm\n, ELT_X86_64_VEC + \n * ELT_X86_64_VEC_SLOT(%rsp)
	.endr
	jmp	.Lsaved\@
.Lsave_avx512\@:
	.irp	n, 0, 1, 2, 3, 4, 5, 6, 7
	vmovdqa64 %zmm\n, ELT_X86_64_VEC + \n * ELT_X86_64_VEC_SLOT(%rsp)
	.endr
.Lsaved\@:
.endm

.macro RESTORE_VECTORS
	movzbl	elt_x86_64_vector_width(%rip), %eax
	cmpl	$ELT_X86_64_VEC_AVX, %eax
	je	.Lrestore_avx\@
	ja	.Lrestore_avx512\@
	.irp	n, 0, 1, 2, 3, 4, 5, 6, 7
	movdqa	ELT_X86_64_VEC + \n * ELT_X86_64_VEC_SLOT(%rsp), %xmm\n
	.endr
	jmp	.Lrestored\@
.Lrestore_avx\@:
	.irp	n, 0, 1, 2, 3, 4, 5, 6, 7
	vmovdqa	ELT_X86_64_VEC + \n * ELT_X86_64_VEC_SLOT(%rsp), %ymm\n
	.endr
	jmp	.Lrestored\@
.Lrestore_avx512\@:
	.irp	n, 0, 1, 2, 3, 4, 5, 6, 7
	vmovdqa64 ELT_X86_64_VEC + \n * ELT_X86_64_VEC_SLOT(%rsp), %zmm\n
	.endr
.Lrestored\@:
.endm

/*
 * A long double result is in st0 (a complex one in st0 and st1).  The ABI
 * wants the x87 stack empty at a call, so pop what is there, remembering
 * how much, and push it back afterwards.  fxam tells an empty register
 * (C3=1, C2=0, C0=1) without faulting.
 */
.macro SAVE_X87
	movl	$0, ELT_X86_64_X87_DEPTH(%rsp)
	.irp	n, 0, 1
	fxam
	fnstsw	%ax
	andw	$0x4500, %ax
	cmpw	$0x4100, %ax
	je	.Lx87_saved\@
	fstpt	ELT_X86_64_X87 + \n * ELT_X86_64_X87_SLOT(%rsp)
	movw	$0, ELT_X86_64_X87 + \n * ELT_X86_64_X87_SLOT + 10(%rsp)
	movl	$0, ELT_X86_64_X87 + \n * ELT_X86_64_X87_SLOT + 12(%rsp)
	incl	ELT_X86_64_X87_DEPTH(%rsp)      /* the padding zeroed: it is in the range */
	.endr
.Lx87_saved\@:
.endm

.macro RESTORE_X87
	movl	ELT_X86_64_X87_DEPTH(%rsp), %eax
	cmpl	$2, %eax
	jne	.Lx87_one\@
	fldt	ELT_X86_64_X87 + ELT_X86_64_X87_SLOT(%rsp)
.Lx87_one\@:
	testl	%eax, %eax
	je	.Lx87_restored\@
	fldt	ELT_X86_64_X87(%rsp)
.Lx87_restored\@:
.endm

.macro HELPER name, hook, x87
ELT_ENTRY(\name)
	pushq	%rbp
	.cfi_adjust_cfa_offset 8
	.cfi_rel_offset %rbp, 0
	movq	%rsp, %rbp
	.cfi_def_cfa_register %rbp
	subq	$ELT_X86_64_FRAME_SIZE, %rsp
	andq	$-ELT_X86_64_FRAME_ALIGN, %rsp

	movq	%rdi, ELT_X86_64_RDI(%rsp)
	movq	%rsi, ELT_X86_64_RSI(%rsp)
	movq	%rdx, ELT_X86_64_RDX(%rsp)
	movq	%rcx, ELT_X86_64_RCX(%rsp)
	movq	%r8, ELT_X86_64_R8(%rsp)
	movq	%r9, ELT_X86_64_R9(%rsp)
	movq	%rax, ELT_X86_64_RAX(%rsp)
	movq	%r10, ELT_X86_64_R10(%rsp)
	movq	%r11, ELT_X86_64_R11(%rsp)
	movq	16(%rbp), %r11
	movq	%r11, ELT_X86_64_FUNCTION_ID(%rsp)
	movq	24(%rbp), %r11
	movq	%r11, ELT_X86_64_CALLER_SP(%rsp)
	movl	$\hook, ELT_X86_64_HOOK(%rsp)
	SAVE_VECTORS
	.if \x87
	SAVE_X87
	.else
	movl	$0, ELT_X86_64_X87_DEPTH(%rsp)
	.endif

	movq	%rsp, %rdi
	call	elt_x86_64_dispatch

	.if \x87
	RESTORE_X87
	.endif
	RESTORE_VECTORS
	movq	ELT_X86_64_RDI(%rsp), %rdi
	movq	ELT_X86_64_RSI(%rsp), %rsi
	movq	ELT_X86_64_RDX(%rsp), %rdx
	movq	ELT_X86_64_RCX(%rsp), %rcx
	movq	ELT_X86_64_R8(%rsp), %r8
	movq	ELT_X86_64_R9(%rsp), %r9
	movq	ELT_X86_64_RAX(%rsp), %rax
	movq	ELT_X86_64_R10(%rsp), %r10
	movq	ELT_X86_64_R11(%rsp), %r11

	movq	%rbp, %rsp
	.cfi_def_cfa_register %rsp
	popq	%rbp
	.cfi_adjust_cfa_offset -8
	.cfi_restore %rbp
	ret	$16
ELT_END(\name)
.endm

	ELT_LOCAL(elt_x86_64_dispatch)
	ELT_LOCAL(elt_x86_64_vector_width)

	HELPER	elt_helper_enter, ELT_HOOK_ENTER, 0
	HELPER	elt_helper_leave, ELT_HOOK_LEAVE, 1
	HELPER	elt_helper_tailcall, ELT_HOOK_TAILCALL, 0

	ELT_OBJECT_NOTES
