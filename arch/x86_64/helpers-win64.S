/*
 * x86-64 Windows (Microsoft x64) helpers: elt_helper_enter,
 * elt_helper_leave and elt_helper_tailcall, called by instrumented code
 * (doc/abi.md).
 *
 *   in:  on the stack, pushed in this order before the call: the caller SP
 *        (the SP before the call to the instrumented function: its home
 *        area, then its stack arguments), then the function id.  The
 *        helper pops both.
 *   out: every general register unchanged (%rcx is also the continuation
 *        return), xmm0-15 unchanged at their full width (ymm on AVX, zmm on
 *        AVX-512: the upper halves of ymm6-15 are volatile on Win64, so the
 *        C code below would not keep them), MXCSR and the x87 control word
 *        (nonvolatile: the C code keeps them).  Only the arithmetic flags
 *        and the registers that carry nothing here (zmm16-31, k0-7:
 *        volatile in the ABI) may change.
 *
 * The stack pointer at the call need not be aligned: the helper aligns its
 * own frame, reserves the 32-byte home area for the C call, and keeps
 * %rbp as the frame pointer, which the SEH unwind data describes, so
 * RtlVirtualUnwind (debuggers, CaptureStackBackTrace, exceptions) gets
 * through the helper.
 */
#include "asm.h"
#include "frame-win64.h"
#include "hook.h"

/* Where the register image starts above the stack pointer of the C call:
 * past the home area, at the next 64-byte boundary. */
#define IMAGE 64
#define SLOT(n) (IMAGE + ELT_WIN64_VEC + (n) * ELT_WIN64_VEC_SLOT)

	.text

.macro SAVE_VECTORS
	movzbl	elt_x86_64_vector_width(%rip), %eax
	cmpl	$ELT_X86_64_VEC_AVX, %eax
	je	.Lsave_avx\@
	ja	.Lsave_avx512\@
	.irp	n, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15
	movdqa	%xmm\n, SLOT(\n)(%rsp)
	.endr
	jmp	.Lsaved\@
.Lsave_avx\@:
	.irp	n, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15
	vmovdqa	%ymm\n, SLOT(\n)(%rsp)
	.endr
	jmp	.Lsaved\@
.Lsave_avx512\@:
	.irp	n, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15
	vmovdqa64 %zmm\n, SLOT(\n)(%rsp)
	.endr
.Lsaved\@:
.endm

.macro RESTORE_VECTORS
	movzbl	elt_x86_64_vector_width(%rip), %eax
	cmpl	$ELT_X86_64_VEC_AVX, %eax
	je	.Lrestore_avx\@
	ja	.Lrestore_avx512\@
	.irp	n, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15
	movdqa	SLOT(\n)(%rsp), %xmm\n
	.endr
	jmp	.Lrestored\@
.Lrestore_avx\@:
	.irp	n, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15
	vmovdqa	SLOT(\n)(%rsp), %ymm\n
	.endr
	jmp	.Lrestored\@
.Lrestore_avx512\@:
	.irp	n, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15
	vmovdqa64 SLOT(\n)(%rsp), %zmm\n
	.endr
.Lrestored\@:
.endm

.macro HELPER name, hook
ELT_ENTRY(\name)
	pushq	%rbp
	.seh_pushreg %rbp
	movq	%rsp, %rbp
	.seh_setframe %rbp, 0
	.seh_endprologue
	/* With a frame pointer, the body may move %rsp (as alloca does). */
	subq	$(IMAGE + ELT_WIN64_FRAME_SIZE), %rsp
	andq	$-ELT_WIN64_FRAME_ALIGN, %rsp

	movq	%rcx, IMAGE + ELT_WIN64_RCX(%rsp)
	movq	%rdx, IMAGE + ELT_WIN64_RDX(%rsp)
	movq	%r8, IMAGE + ELT_WIN64_R8(%rsp)
	movq	%r9, IMAGE + ELT_WIN64_R9(%rsp)
	movq	%rax, IMAGE + ELT_WIN64_RAX(%rsp)
	movq	%r10, IMAGE + ELT_WIN64_R10(%rsp)
	movq	%r11, IMAGE + ELT_WIN64_R11(%rsp)
	movq	16(%rbp), %r11
	movq	%r11, IMAGE + ELT_WIN64_FUNCTION_ID(%rsp)
	movq	24(%rbp), %r11
	movq	%r11, IMAGE + ELT_WIN64_CALLER_SP(%rsp)
	movl	$\hook, IMAGE + ELT_WIN64_HOOK(%rsp)
	SAVE_VECTORS

	leaq	IMAGE(%rsp), %rcx       /* %rsp: 16-aligned, home area below the image */
	call	elt_x86_64_win64_dispatch

	RESTORE_VECTORS
	movq	IMAGE + ELT_WIN64_RCX(%rsp), %rcx
	movq	IMAGE + ELT_WIN64_RDX(%rsp), %rdx
	movq	IMAGE + ELT_WIN64_R8(%rsp), %r8
	movq	IMAGE + ELT_WIN64_R9(%rsp), %r9
	movq	IMAGE + ELT_WIN64_RAX(%rsp), %rax
	movq	IMAGE + ELT_WIN64_R10(%rsp), %r10
	movq	IMAGE + ELT_WIN64_R11(%rsp), %r11

	/* An epilog of the form the Windows unwinder recognizes. */
	leaq	0(%rbp), %rsp
	popq	%rbp
	ret	$16
ELT_END(\name)
.endm

	HELPER	elt_helper_enter, ELT_HOOK_ENTER
	HELPER	elt_helper_leave, ELT_HOOK_LEAVE
	HELPER	elt_helper_tailcall, ELT_HOOK_TAILCALL

	/* The DLL exports what is dllexport: say so for the helpers, as the
	 * compiler does for C (include/asyncelt/helpers.h declares them). */
	.section .drectve, "yn"
	.ascii	" -export:elt_helper_enter -export:elt_helper_leave"
	.ascii	" -export:elt_helper_tailcall"

	ELT_OBJECT_NOTES
