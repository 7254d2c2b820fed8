/*
 * i386 System V (Linux, cdecl) helpers: elt_helper_enter, elt_helper_leave
 * and elt_helper_tailcall, called by instrumented code (doc/abi.md).
 *
 *   in:  on the stack, pushed in this order before the call: the caller SP
 *        (the SP before the call to the instrumented function: its first
 *        stack argument), then the function id.  The helper pops both
 *        (ret $8).
 *   out: every general register unchanged (eax, edx: the result, ecx: the
 *        continuation, ebx, esi, edi, ebp), xmm0-7 unchanged at their full
 *        width (ymm on AVX, zmm on AVX-512; nothing without SSE), and on
 *        Leave the x87 st0/st1 a float, double or long double result lives
 *        in, with the whole x87 environment (control and status words).
 *        The MXCSR and x87 control bits are kept as the C ABI keeps them.
 *        Only the arithmetic flags and k0-7 may change.
 *
 * The stack pointer at the call need not be aligned: the helper aligns its
 * own frame (and keeps %ebp as a frame pointer, described by CFI, so
 * debuggers and backtrace() unwind through it), then calls C with the
 * 16-byte alignment the i386 psABI asks for.
 *
 * The code is position independent: the one datum it reads, the vector
 * width, is reached GOT-relative through a local pc thunk.
 */
#include "asm.h"
#include "frame.h"
#include "hook.h"

	.text

/* %eax = its own return address: the base of a GOT-relative address. */
	.p2align 4
	.type	elt_i386_pc_thunk_ax, %function
elt_i386_pc_thunk_ax:
	.cfi_startproc
	movl	(%esp), %eax
	ret
	.cfi_endproc
	.size	elt_i386_pc_thunk_ax, . - elt_i386_pc_thunk_ax

/* Vector argument/return registers at the width this CPU has; the width is
 * remembered in the frame for the restore. */
.macro SAVE_VECTORS
	call	elt_i386_pc_thunk_ax
	addl	$_GLOBAL_OFFSET_TABLE_, %eax
	movzbl	elt_i386_vector_width@GOTOFF(%eax), %eax
	movl	%eax, ELT_I386_VEC_WIDTH(%esp)
	cmpl	$ELT_I386_VEC_SSE, %eax
	jb	.Lsaved\@
	ja	.Lsave_wide\@
	.irp	n, 0, 1, 2, 3, 4, 5, 6, 7
	movaps	%xmm\n, ELT_I386_VEC + \n * ELT_I386_VEC_SLOT(%esp)   /* SSE1 */
	.endr
	jmp	.Lsaved\@
.Lsave_wide\@:
	cmpl	$ELT_I386_VEC_AVX, %eax
	ja	.Lsave_avx512\@
	.irp	n, 0, 1, 2, 3, 4, 5, 6, 7
	vmovdqa	%ymm\n, ELT_I386_VEC + \n * ELT_I386_VEC_SLOT(%esp)
	.endr
	jmp	.Lsaved\@
.Lsave_avx512\@:
	.irp	n, 0, 1, 2, 3, 4, 5, 6, 7
	vmovdqa64 %zmm\n, ELT_I386_VEC + \n * ELT_I386_VEC_SLOT(%esp)
	.endr
.Lsaved\@:
.endm

.macro RESTORE_VECTORS
	movl	ELT_I386_VEC_WIDTH(%esp), %eax
	cmpl	$ELT_I386_VEC_SSE, %eax
	jb	.Lrestored\@
	ja	.Lrestore_wide\@
	.irp	n, 0, 1, 2, 3, 4, 5, 6, 7
	movaps	ELT_I386_VEC + \n * ELT_I386_VEC_SLOT(%esp), %xmm\n
	.endr
	jmp	.Lrestored\@
.Lrestore_wide\@:
	cmpl	$ELT_I386_VEC_AVX, %eax
	ja	.Lrestore_avx512\@
	.irp	n, 0, 1, 2, 3, 4, 5, 6, 7
	vmovdqa	ELT_I386_VEC + \n * ELT_I386_VEC_SLOT(%esp), %ymm\n
	.endr
	jmp	.Lrestored\@
.Lrestore_avx512\@:
	.irp	n, 0, 1, 2, 3, 4, 5, 6, 7
	vmovdqa64 ELT_I386_VEC + \n * ELT_I386_VEC_SLOT(%esp), %zmm\n
	.endr
.Lrestored\@:
.endm

/*
 * A float, double or long double result is in st0 (the x87 register
 * stack holds it at whatever precision the callee computed it).  The ABI
 * wants the x87 stack empty at a call, so pop what is there (at most st0
 * and st1), remembering how much, and push it back afterwards.  fxam tells
 * an empty register (C3=1, C2=0, C0=1) without faulting.
 *
 * A float or double result is read from st0 rounded to its type, as its
 * caller would store it: fnstenv first saves the environment and masks
 * every x87 exception, so the rounding can never trap; fldenv at the end
 * gives back the caller's control word and status flags exactly, whatever
 * the plugins' own x87 arithmetic did to them.
 */
.macro SAVE_X87
	movl	$0, ELT_I386_X87_DEPTH(%esp)
	fxam
	fnstsw	%ax
	andw	$0x4500, %ax
	cmpw	$0x4100, %ax
	je	.Lx87_saved\@
	fnstenv	ELT_I386_X87_ENV(%esp)
	fsts	ELT_I386_ST0_FLOAT(%esp)
	fstl	ELT_I386_ST0_DOUBLE(%esp)
	fstpt	ELT_I386_X87(%esp)
	movl	$1, ELT_I386_X87_DEPTH(%esp)
	fxam
	fnstsw	%ax
	andw	$0x4500, %ax
	cmpw	$0x4100, %ax
	je	.Lx87_saved\@
	fstpt	ELT_I386_X87 + ELT_I386_X87_SLOT(%esp)
	movl	$2, ELT_I386_X87_DEPTH(%esp)
.Lx87_saved\@:
.endm

.macro RESTORE_X87
	movl	ELT_I386_X87_DEPTH(%esp), %eax
	testl	%eax, %eax
	je	.Lx87_restored\@
	cmpl	$2, %eax
	jne	.Lx87_one\@
	fldt	ELT_I386_X87 + ELT_I386_X87_SLOT(%esp)
.Lx87_one\@:
	fldt	ELT_I386_X87(%esp)
	fldenv	ELT_I386_X87_ENV(%esp)
.Lx87_restored\@:
.endm

.macro HELPER name, hook, x87
ELT_ENTRY(\name)
	pushl	%ebp
	.cfi_adjust_cfa_offset 4
	.cfi_rel_offset %ebp, 0
	movl	%esp, %ebp
	.cfi_def_cfa_register %ebp
	subl	$ELT_I386_FRAME_SIZE, %esp
	andl	$-ELT_I386_FRAME_ALIGN, %esp

	movl	%eax, ELT_I386_EAX(%esp)
	movl	%edx, ELT_I386_EDX(%esp)
	movl	%ecx, ELT_I386_ECX(%esp)
	movl	8(%ebp), %eax
	movl	%eax, ELT_I386_FUNCTION_ID(%esp)
	movl	12(%ebp), %eax
	movl	%eax, ELT_I386_CALLER_SP(%esp)
	movl	$\hook, ELT_I386_HOOK(%esp)
	SAVE_VECTORS
	.if \x87
	SAVE_X87
	.else
	movl	$0, ELT_I386_X87_DEPTH(%esp)
	.endif

	movl	%esp, %eax
	subl	$16, %esp               /* the argument, 16-byte aligned at the call */
	movl	%eax, (%esp)
	call	elt_i386_dispatch
	addl	$16, %esp

	.if \x87
	RESTORE_X87
	.endif
	RESTORE_VECTORS
	movl	ELT_I386_EAX(%esp), %eax
	movl	ELT_I386_EDX(%esp), %edx
	movl	ELT_I386_ECX(%esp), %ecx

	movl	%ebp, %esp
	.cfi_def_cfa_register %esp
	popl	%ebp
	.cfi_adjust_cfa_offset -4
	.cfi_restore %ebp
	ret	$8
ELT_END(\name)
.endm

	ELT_LOCAL(elt_i386_dispatch)
	ELT_LOCAL(elt_i386_vector_width)

	HELPER	elt_helper_enter, ELT_HOOK_ENTER, 0
	HELPER	elt_helper_leave, ELT_HOOK_LEAVE, 1
	HELPER	elt_helper_tailcall, ELT_HOOK_TAILCALL, 0

	ELT_OBJECT_NOTES
