/*
 * i386 System V (Linux, cdecl) helpers: elt_helper_enter, elt_helper_leave,
 * elt_helper_leave_x87 and elt_helper_tailcall, called by instrumented
 * code (doc/abi.md).
 *
 *   in:  on the stack, pushed in this order before the call: the caller SP
 *        (the SP before the call to the instrumented function: its first
 *        stack argument), then the function id.  The helper pops both
 *        (ret $8).
 *   out: every general register unchanged (eax, edx: the result, ecx: the
 *        continuation, ebx, esi, edi, ebp), xmm0-7 unchanged at their full
 *        width (ymm on AVX, zmm on AVX-512; nothing without SSE), MXCSR and
 *        the x87 control word, and after elt_helper_leave_x87 the x87
 *        st0/st1 a float, double or long double result lives in, with the
 *        whole x87 environment (control and status words).
 *        Only the arithmetic flags and k0-7 may change.
 *
 * The stack pointer at the call need not be aligned: the helper aligns its
 * own frame (and keeps %ebp as a frame pointer, described by CFI, so
 * debuggers and backtrace() unwind through it), then calls C with the
 * 16-byte alignment the i386 psABI asks for.
 *
 * Each entry first tests elt_armed: with no plugin to call it returns at
 * once.  Armed, it jumps to the body for the vector width this CPU has,
 * chosen once at load time (abi.c).  Position independent: the entry
 * reaches both GOT-relative through a local pc thunk, and %eax, which
 * that needs, waits on the stack for the body (or the idle return).
 */
#include "asm.h"
#include "frame.h"
#include "plugin-state.h"

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

/* Vector argument/return registers at one width (none without SSE). */
.macro VECTORS op, width
	.irp	n, 0, 1, 2, 3, 4, 5, 6, 7
	.if \width == ELT_I386_VEC_SSE
	.ifc \op, save
	movaps	%xmm\n, ELT_I386_VEC + \n * ELT_I386_VEC_SLOT(%esp)   /* SSE1 */
	.else
	movaps	ELT_I386_VEC + \n * ELT_I386_VEC_SLOT(%esp), %xmm\n
	.endif
	.elseif \width == ELT_I386_VEC_AVX
	.ifc \op, save
	vmovdqa	%ymm\n, ELT_I386_VEC + \n * ELT_I386_VEC_SLOT(%esp)
	.else
	vmovdqa	ELT_I386_VEC + \n * ELT_I386_VEC_SLOT(%esp), %ymm\n
	.endif
	.elseif \width == ELT_I386_VEC_AVX512
	.ifc \op, save
	vmovdqa64 %zmm\n, ELT_I386_VEC + \n * ELT_I386_VEC_SLOT(%esp)
	.else
	vmovdqa64 ELT_I386_VEC + \n * ELT_I386_VEC_SLOT(%esp), %zmm\n
	.endif
	.endif
	.endr
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

/* The FP control state is the instrumented code's, whatever a plugin did
 * (doc/abi.md): read before the plugins, `above` bytes above %esp the
 * frame starts at, and reloaded only when a plugin changed it, since
 * reading is cheap and loading is not.  The x87 control word before
 * SAVE_X87 masks the exceptions. */
.macro SAVE_FP_CONTROL width, above
	.if \width != ELT_I386_VEC_NONE
	stmxcsr	ELT_I386_MXCSR + \above(%esp)
	.endif
	fnstcw	ELT_I386_FCW + \above(%esp)
.endm

.macro RESTORE_FP_CONTROL width
	.if \width != ELT_I386_VEC_NONE
	stmxcsr	ELT_I386_SCRATCH(%esp)
	movl	ELT_I386_SCRATCH(%esp), %eax
	cmpl	ELT_I386_MXCSR(%esp), %eax
	je	.Lmxcsr_kept\@
	ldmxcsr	ELT_I386_MXCSR(%esp)
.Lmxcsr_kept\@:
	.endif
	fnstcw	ELT_I386_SCRATCH(%esp)
	movzwl	ELT_I386_SCRATCH(%esp), %eax
	cmpw	ELT_I386_FCW(%esp), %ax
	je	.Lfcw_kept\@
	fldcw	ELT_I386_FCW(%esp)
.Lfcw_kept\@:
.endm

/* The armed half of a helper, for one hook at one vector width; `dispatch`
 * is that hook's dispatcher in lib/dispatch.c.  On entry the caller's
 * %eax is on the stack above the return address, and %eax holds the GOT
 * address HELPER computed.
 *
 * While no plugin may change the FP control state (ELT_PLUGINS_FLOAT
 * clear, plugin-state.h), a body other than the x87 Leave neither saves
 * nor checks it and calls the _nofloat dispatcher; otherwise it does both
 * out of line, after its return.  The x87 Leave always does: its fnstenv
 * and fldenv are the x87 part of the state anyway. */
.macro BODY name, dispatch, width, x87
ELT_SEGMENT_ENTRY(\name)
	.cfi_adjust_cfa_offset 4
	pushl	%ebp
	.cfi_adjust_cfa_offset 4
	.cfi_rel_offset %ebp, 0
	movl	%esp, %ebp
	.cfi_def_cfa_register %ebp
	subl	$ELT_I386_FRAME_SIZE, %esp
	andl	$-ELT_I386_FRAME_ALIGN, %esp

	movl	%edx, ELT_I386_EDX(%esp)
	movl	%ecx, ELT_I386_ECX(%esp)
	movl	%eax, %edx              /* the GOT */
	movl	4(%ebp), %eax
	movl	%eax, ELT_I386_EAX(%esp)
	movl	$\width, ELT_I386_VEC_WIDTH(%esp)
	VECTORS	save, \width
	.if \width >= ELT_I386_VEC_AVX
	/* The C below is SSE code: dirty upper halves would cost it the
	 * AVX/SSE transition on most CPUs.  They are saved; clear them. */
	vzeroupper
	.endif
	.if \x87
	SAVE_FP_CONTROL \width, 0
	SAVE_X87
	.endif

	/* dispatch(frame, id, caller SP[, continuation]), the stack 16-byte
	 * aligned at the call; the continuation, passed to every hook, is
	 * read by a Leave only (the caller pops arguments). */
	movl	%esp, %eax
	subl	$16, %esp
	movl	%eax, 0(%esp)
	movl	12(%ebp), %eax
	movl	%eax, 4(%esp)
	movl	16(%ebp), %eax
	movl	%eax, 8(%esp)
	movl	%ecx, 12(%esp)
	.if \x87
	call	\dispatch
	addl	$16, %esp
	RESTORE_FP_CONTROL \width
	RESTORE_X87
	.else
	testb	$ELT_PLUGINS_FLOAT_BIT, elt_plugins_state + ELT_PLUGINS_FLOAT_BYTE@GOTOFF(%edx)
	jne	.Lfloat\@
	call	\dispatch\()_nofloat
	addl	$16, %esp
	.endif
.Ldispatched\@:
	VECTORS	restore, \width
	movl	ELT_I386_EAX(%esp), %eax
	movl	ELT_I386_EDX(%esp), %edx
	movl	ELT_I386_ECX(%esp), %ecx

	movl	%ebp, %esp
	.if !\x87
	.cfi_remember_state
	.endif
	.cfi_def_cfa_register %esp
	popl	%ebp
	.cfi_adjust_cfa_offset -4
	.cfi_restore %ebp
	leal	4(%esp), %esp           /* the entry's copy of %eax */
	.cfi_adjust_cfa_offset -4
	ret	$8

	.if !\x87
	.cfi_restore_state
.Lfloat\@:
	SAVE_FP_CONTROL \width, 16     /* the arguments are pushed */
	call	\dispatch
	addl	$16, %esp
	RESTORE_FP_CONTROL \width
	jmp	.Ldispatched\@
	.endif
ELT_END(\name)
	ELT_LOCAL(\name)
.endm

/* The public entry: idle, return; armed, the body for this CPU. */
.macro HELPER name, body
ELT_SEGMENT_ENTRY(\name)
	pushl	%eax
	.cfi_adjust_cfa_offset 4
	call	elt_i386_pc_thunk_ax
	addl	$_GLOBAL_OFFSET_TABLE_, %eax
	cmpb	$0, elt_armed@GOTOFF(%eax)
	je	.Lidle\@
	jmp	*elt_i386_body + \body@GOTOFF(%eax)
.Lidle\@:
	popl	%eax
	.cfi_adjust_cfa_offset -4
	ret	$8
ELT_END(\name)
.endm

	ELT_LOCAL(elt_armed)
	ELT_LOCAL(elt_dispatch_enter)
	ELT_LOCAL(elt_dispatch_leave)
	ELT_LOCAL(elt_dispatch_tailcall)
	ELT_LOCAL(elt_dispatch_enter_nofloat)
	ELT_LOCAL(elt_dispatch_leave_nofloat)
	ELT_LOCAL(elt_dispatch_tailcall_nofloat)
	ELT_LOCAL(elt_plugins_state)
	ELT_LOCAL(elt_i386_body)
	ELT_LOCAL(elt_i386_bodies)

	HELPER	elt_helper_enter, ELT_I386_BODY_ENTER
	HELPER	elt_helper_leave, ELT_I386_BODY_LEAVE
	HELPER	elt_helper_leave_x87, ELT_I386_BODY_LEAVE_X87
	HELPER	elt_helper_tailcall, ELT_I386_BODY_TAILCALL

.macro BODIES width, suffix
	BODY	elt_i386_enter_\suffix, elt_dispatch_enter, \width, 0
	BODY	elt_i386_leave_\suffix, elt_dispatch_leave, \width, 0
	BODY	elt_i386_leave_x87_\suffix, elt_dispatch_leave, \width, 1
	BODY	elt_i386_tailcall_\suffix, elt_dispatch_tailcall, \width, 0
.endm

	BODIES	ELT_I386_VEC_NONE, none
	BODIES	ELT_I386_VEC_SSE, sse
	BODIES	ELT_I386_VEC_AVX, avx
	BODIES	ELT_I386_VEC_AVX512, avx512

/* The table abi.c chooses a row of (frame.h's offsets, in order). */
.macro BODY_ROW suffix
	.long	elt_i386_enter_\suffix, elt_i386_leave_\suffix
	.long	elt_i386_leave_x87_\suffix, elt_i386_tailcall_\suffix
.endm

	.section .data.rel.ro, "aw"
	.p2align 2
	.globl	elt_i386_bodies
elt_i386_bodies:
	BODY_ROW none
	BODY_ROW sse
	BODY_ROW avx
	BODY_ROW avx512

	.data
	.p2align 4
	.globl	elt_i386_body
elt_i386_body:
	BODY_ROW sse

	ELT_OBJECT_NOTES
