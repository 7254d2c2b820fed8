/*
 * x86-64 System V helpers: elt_helper_enter, elt_helper_leave,
 * elt_helper_leave_x87 and elt_helper_tailcall, called by instrumented
 * code (doc/abi.md).
 *
 *   in:  on the stack, pushed in this order before the call: the caller SP
 *        (the SP before the call to the instrumented function: its first
 *        stack argument), then the function id.  The helper pops both.
 *   out: every general register unchanged, xmm0-7 unchanged at their full
 *        width (ymm on AVX, zmm on AVX-512), MXCSR and the x87 control word
 *        unchanged, and after elt_helper_leave_x87 the x87 st0/st1 a long
 *        double result lives in.  Only the arithmetic flags and the vector
 *        registers that carry nothing here (8-31, k0-7: caller-saved in the
 *        ABI) may change.
 *
 * Each entry first tests elt_armed: with no plugin to call it returns at
 * once, saving nothing.  Armed, it jumps to the body for the vector width
 * this CPU has, chosen once at load time (sysv.c), so no call tests the
 * width again.
 *
 * The stack pointer at the call need not be aligned: a body aligns its
 * own frame (and keeps %rbp as a frame pointer, described by CFI, so
 * debuggers and backtrace() unwind through it).
 */
#include "asm.h"
#include "cpu.h"
#include "fp-control.h"
#include "frame.h"
#include "plugin-state.h"
#include "thread-flags.h"

/* ThreadSanitizer sees no store made here: under it the dispatcher
 * raises and lowers the thread's flag, so that it sees the plugin code
 * end before a shutdown frees what that code used.  gcc says so with a
 * macro, clang with a feature. */
#if defined(__SANITIZE_THREAD__)
# define FLAG_IN_BODY 0
#elif defined(__has_feature)
# if __has_feature(thread_sanitizer)
#  define FLAG_IN_BODY 0
# endif
#endif
#ifndef FLAG_IN_BODY
# define FLAG_IN_BODY 1
#endif

	.text

/* Vector argument/return registers 0-7 at one width: 0 SSE, 1 AVX, 2 AVX-512. */
.macro VECTORS op, width
	.irp	n, 0, 1, 2, 3, 4, 5, 6, 7
	.if \width == ELT_X86_64_VEC_SSE
	.ifc \op, save
	movdqa	%xmm\n, ELT_X86_64_VEC + \n * ELT_X86_64_VEC_SLOT(%rsp)
	.else
	movdqa	ELT_X86_64_VEC + \n * ELT_X86_64_VEC_SLOT(%rsp), %xmm\n
	.endif
	.elseif \width == ELT_X86_64_VEC_AVX
	.ifc \op, save
	vmovdqa	%ymm\n, ELT_X86_64_VEC + \n * ELT_X86_64_VEC_SLOT(%rsp)
	.else
	vmovdqa	ELT_X86_64_VEC + \n * ELT_X86_64_VEC_SLOT(%rsp), %ymm\n
	.endif
	.else
	.ifc \op, save
	vmovdqa64 %zmm\n, ELT_X86_64_VEC + \n * ELT_X86_64_VEC_SLOT(%rsp)
	.else
	vmovdqa64 ELT_X86_64_VEC + \n * ELT_X86_64_VEC_SLOT(%rsp), %zmm\n
	.endif
	.endif
	.endr
.endm

/*
 * A long double result is in st0 (a complex one in st0 and st1).  The ABI
 * wants the x87 stack empty at a call, so pop what is there, remembering
 * how much, and push it back afterwards.  fxam tells an empty register
 * (C3=1, C2=0, C0=1) without faulting.  Only elt_helper_leave_x87 does
 * this: no other segment end can have a value there.
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

/* A dispatcher's arguments but the continuation, already in %rcx. */
.macro DISPATCH_ARGUMENTS
	movq	%rsp, %rdi
	movq	16(%rbp), %rsi
	movq	24(%rbp), %rdx
.endm

/* The armed half of a helper, for one hook at one vector width; `dispatch`
 * is that hook's dispatcher in lib/dispatch.c. */
.macro BODY name, dispatch, width, x87
ELT_SEGMENT_ENTRY(\name)
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
	VECTORS	save, \width
	.if \width != ELT_X86_64_VEC_SSE
	/* The C below is SSE code: with dirty upper halves each of its
	 * vector instructions would pay the AVX/SSE transition (or a false
	 * dependency) on most CPUs.  The uppers are saved; clear them. */
	vzeroupper
	.endif
	.if \x87
	SAVE_X87
	.endif

	/* dispatch(frame, id, caller SP[, continuation]): a Leave's
	 * continuation return register, %rcx, is already its fourth
	 * argument.  Straight on while no plugin can change the FP control
	 * state, out of line to save and check it otherwise. */
	DISPATCH_ARGUMENTS
	testb	$ELT_PLUGINS_FLOAT_BIT, elt_plugins_state + ELT_PLUGINS_FLOAT_BYTE(%rip)
	jne	.Lfloat\@
#if FLAG_IN_BODY
	/* The thread's flag, raised and lowered here around the call as
	 * elt_callback_begin() and _end() do (lib/internal.h): the
	 * dispatcher then keeps no register across its plugin's callback,
	 * which it jumps to.  A thread not attached, or in plugin code
	 * already, goes the dispatcher's own way. */
	movq	elt_thread@gottpoff(%rip), %rax
	cmpl	$ELT_THREAD_ATTACHED, %fs:(%rax)
	jne	.Lnot_attached\@
#ifdef ELT_TEST_HOOKS
	call	elt_test_point_flag_raising     /* a C call: set them again */
	DISPATCH_ARGUMENTS
	movq	ELT_X86_64_RCX(%rsp), %rcx
	movq	elt_thread@gottpoff(%rip), %rax
#endif
	movl	$(ELT_THREAD_ATTACHED | ELT_THREAD_IN_CALLBACK), %fs:(%rax)
	call	\dispatch\()_flag_up
	movq	elt_thread@gottpoff(%rip), %rax
	movl	$ELT_THREAD_ATTACHED, %fs:(%rax)
#else
	call	\dispatch\()_nofloat
#endif
.Ldispatched\@:
	.if \x87
	RESTORE_X87
	.endif
	VECTORS	restore, \width
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
	.cfi_remember_state
	.cfi_def_cfa_register %rsp
	popq	%rbp
	.cfi_adjust_cfa_offset -8
	.cfi_restore %rbp
	ret	$16

	.cfi_restore_state
#if FLAG_IN_BODY
.Lnot_attached\@:
	call	\dispatch\()_nofloat
	jmp	.Ldispatched\@
#endif
.Lfloat\@:
	SAVE_FP_CONTROL ELT_X86_64_MXCSR, ELT_X86_64_FCW
	call	\dispatch
	RESTORE_FP_CONTROL ELT_X86_64_MXCSR, ELT_X86_64_FCW, ELT_X86_64_SCRATCH
	jmp	.Ldispatched\@
ELT_END(\name)
	ELT_LOCAL(\name)
.endm

/* The public entry: idle, return; armed, the body for this CPU. */
.macro HELPER name, body
ELT_SEGMENT_ENTRY(\name)
	cmpb	$0, elt_armed(%rip)
	je	.Lidle\@
	jmp	*elt_x86_64_body + \body(%rip)
.Lidle\@:
	ret	$16
ELT_END(\name)
.endm

	ELT_LOCAL(elt_armed)
	ELT_LOCAL(elt_dispatch_enter)
	ELT_LOCAL(elt_dispatch_leave)
	ELT_LOCAL(elt_dispatch_tailcall)
	ELT_LOCAL(elt_dispatch_enter_nofloat)
	ELT_LOCAL(elt_dispatch_leave_nofloat)
	ELT_LOCAL(elt_dispatch_tailcall_nofloat)
#if FLAG_IN_BODY
	/* Only where it is referenced: an undefined symbol declared here
	 * and never used is not a TLS one, and would not link with the
	 * definition. */
	ELT_LOCAL(elt_dispatch_enter_flag_up)
	ELT_LOCAL(elt_dispatch_leave_flag_up)
	ELT_LOCAL(elt_dispatch_tailcall_flag_up)
	ELT_LOCAL(elt_thread)
#ifdef ELT_TEST_HOOKS
	ELT_LOCAL(elt_test_point_flag_raising)
#endif
#endif
	ELT_LOCAL(elt_plugins_state)
	ELT_LOCAL(elt_x86_64_body)
	ELT_LOCAL(elt_x86_64_bodies)

	HELPER	elt_helper_enter, ELT_X86_64_BODY_ENTER
	HELPER	elt_helper_leave, ELT_X86_64_BODY_LEAVE
	HELPER	elt_helper_leave_x87, ELT_X86_64_BODY_LEAVE_X87
	HELPER	elt_helper_tailcall, ELT_X86_64_BODY_TAILCALL

.macro BODIES width, suffix
	BODY	elt_x86_64_enter_\suffix, elt_dispatch_enter, \width, 0
	BODY	elt_x86_64_leave_\suffix, elt_dispatch_leave, \width, 0
	BODY	elt_x86_64_leave_x87_\suffix, elt_dispatch_leave, \width, 1
	BODY	elt_x86_64_tailcall_\suffix, elt_dispatch_tailcall, \width, 0
.endm

	BODIES	ELT_X86_64_VEC_SSE, sse
	BODIES	ELT_X86_64_VEC_AVX, avx
	BODIES	ELT_X86_64_VEC_AVX512, avx512

/* The table cpu.c chooses a row of (cpu.h's offsets, in order). */
.macro BODY_ROW suffix
	.quad	elt_x86_64_enter_\suffix, elt_x86_64_leave_\suffix
	.quad	elt_x86_64_leave_x87_\suffix, elt_x86_64_tailcall_\suffix
.endm

	.section .data.rel.ro, "aw"
	.p2align 3
	.globl	elt_x86_64_bodies
elt_x86_64_bodies:
	BODY_ROW sse
	BODY_ROW avx
	BODY_ROW avx512

	.data
	.p2align 5
	.globl	elt_x86_64_body
elt_x86_64_body:
	BODY_ROW sse

	ELT_OBJECT_NOTES
