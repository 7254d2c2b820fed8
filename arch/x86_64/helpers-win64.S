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
 * Each entry first tests elt_armed: with no plugin to call it returns at
 * once, saving nothing.  Armed, it jumps to the body for the vector width
 * this CPU has, chosen once at load time (cpu.c).
 *
 * The stack pointer at the call need not be aligned: the helper aligns its
 * own frame, reserves the 32-byte home area for the C call, and keeps
 * %rbp as the frame pointer, which the SEH unwind data describes, so
 * RtlVirtualUnwind (debuggers, CaptureStackBackTrace, exceptions) gets
 * through the helper.
 */
#include "asm.h"
#include "cpu.h"
#include "fp-control.h"
#include "frame-win64.h"
#include "plugin-state.h"

/* Where the register image starts above the stack pointer of the C call:
 * past the 32-byte home area, at the next 64-byte boundary. */
#define IMAGE 64
#define SLOT(n) (IMAGE + ELT_WIN64_VEC + (n) * ELT_WIN64_VEC_SLOT)

	.text

/* Vector registers 0-15 at one width: 0 SSE, 1 AVX, 2 AVX-512. */
.macro VECTORS op, width
	.irp	n, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15
	.if \width == ELT_X86_64_VEC_SSE
	.ifc \op, save
	movdqa	%xmm\n, SLOT(\n)(%rsp)
	.else
	movdqa	SLOT(\n)(%rsp), %xmm\n
	.endif
	.elseif \width == ELT_X86_64_VEC_AVX
	.ifc \op, save
	vmovdqa	%ymm\n, SLOT(\n)(%rsp)
	.else
	vmovdqa	SLOT(\n)(%rsp), %ymm\n
	.endif
	.else
	.ifc \op, save
	vmovdqa64 %zmm\n, SLOT(\n)(%rsp)
	.else
	vmovdqa64 SLOT(\n)(%rsp), %zmm\n
	.endif
	.endif
	.endr
.endm

/* The armed half of a helper, for one hook at one vector width; `dispatch`
 * is that hook's dispatcher in lib/dispatch.c. */
.macro BODY name, dispatch, width
ELT_SEGMENT_ENTRY(\name)
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
	VECTORS	save, \width
	.if \width != ELT_X86_64_VEC_SSE
	/* The C below is SSE code: dirty upper halves would cost it the
	 * AVX/SSE transition on most CPUs.  They are saved; clear them. */
	vzeroupper
	.endif
	/* dispatch(frame, id, caller SP[, continuation]).  Straight on
	 * while no plugin can change the FP control state (nonvolatile: the
	 * C code keeps it, unless a plugin broke that rule), out of line to
	 * save and check it otherwise. */
	movq	%rcx, %r9
	leaq	IMAGE(%rsp), %rcx
	movq	16(%rbp), %rdx
	movq	24(%rbp), %r8
	testb	$ELT_PLUGINS_FLOAT_BIT, elt_plugins_state + ELT_PLUGINS_FLOAT_BYTE(%rip)
	jne	.Lfloat\@
	call	\dispatch\()_nofloat
.Ldispatched\@:
	VECTORS	restore, \width
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

	/* Past the epilog, the frame set up: the unwinder goes by the
	 * prolog's codes here. */
.Lfloat\@:
	SAVE_FP_CONTROL (IMAGE+ELT_WIN64_MXCSR), (IMAGE+ELT_WIN64_FCW)
	call	\dispatch
	RESTORE_FP_CONTROL (IMAGE+ELT_WIN64_MXCSR), (IMAGE+ELT_WIN64_FCW), (IMAGE+ELT_WIN64_SCRATCH)
	jmp	.Ldispatched\@
ELT_END(\name)
.endm

/* The public entry: idle, return; armed, the body for this CPU.  Neither
 * path touches the stack: no unwind data beyond the procedure's bounds. */
.macro HELPER name, body
ELT_SEGMENT_ENTRY(\name)
	.seh_endprologue
	cmpb	$0, elt_armed(%rip)
	je	.Lidle\@
	jmp	*elt_x86_64_body + \body(%rip)
.Lidle\@:
	ret	$16
ELT_END(\name)
.endm

	HELPER	elt_helper_enter, ELT_X86_64_BODY_ENTER
	HELPER	elt_helper_leave, ELT_X86_64_BODY_LEAVE
	HELPER	elt_helper_tailcall, ELT_X86_64_BODY_TAILCALL

.macro BODIES width, suffix
	BODY	elt_x86_64_enter_\suffix, elt_dispatch_enter, \width
	BODY	elt_x86_64_leave_\suffix, elt_dispatch_leave, \width
	BODY	elt_x86_64_tailcall_\suffix, elt_dispatch_tailcall, \width
.endm

	BODIES	ELT_X86_64_VEC_SSE, sse
	BODIES	ELT_X86_64_VEC_AVX, avx
	BODIES	ELT_X86_64_VEC_AVX512, avx512

/* The table cpu.c chooses a row of (cpu.h's offsets, in order; no x87
 * results on Win64, so its x87 Leave is the plain one). */
.macro BODY_ROW suffix
	.quad	elt_x86_64_enter_\suffix, elt_x86_64_leave_\suffix
	.quad	elt_x86_64_leave_\suffix, elt_x86_64_tailcall_\suffix
.endm

	.section .rdata, "dr"
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

	.text
	/* The DLL exports what is dllexport: say so for the helpers, as the
	 * compiler does for C (include/asyncelt/helpers.h declares them). */
	.section .drectve, "yn"
	.ascii	" -export:elt_helper_enter -export:elt_helper_leave"
	.ascii	" -export:elt_helper_tailcall"

	ELT_OBJECT_NOTES
