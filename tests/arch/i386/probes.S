/*
 * i386 System V probes (tests/probes.h): instrumented functions that call
 * the helpers exactly as doc/abi.md tells a JIT to.  Position independent
 * (the tests are PIE): %ebx holds the GOT, which also lets the helpers be
 * called through the lazily bound PLT.
 */
#include "asm.h"
#include "../../probes.h"
#include "../lean-pair.h"

	.text
	.p2align 4
	.type	probe_pc_thunk_bx, %function
probe_pc_thunk_bx:
	.cfi_startproc
	movl	(%esp), %ebx
	ret
	.cfi_endproc
	.size	probe_pc_thunk_bx, . - probe_pc_thunk_bx

	.p2align 4
	.type	probe_pc_thunk_cx, %function
probe_pc_thunk_cx:
	.cfi_startproc
	movl	(%esp), %ecx
	ret
	.cfi_endproc
	.size	probe_pc_thunk_cx, . - probe_pc_thunk_cx

/* Frame: saved %ebp, then %ebx (the GOT) and %esi (scratch) below it. */
.macro PROLOG
	pushl	%ebp
	.cfi_adjust_cfa_offset 4
	.cfi_rel_offset %ebp, 0
	movl	%esp, %ebp
	.cfi_def_cfa_register %ebp
	pushl	%ebx
	.cfi_offset %ebx, -12
	pushl	%esi
	.cfi_offset %esi, -16
	call	probe_pc_thunk_bx
	addl	$_GLOBAL_OFFSET_TABLE_, %ebx
.endm

.macro EPILOG pop=0
	movl	-4(%ebp), %ebx
	.cfi_restore %ebx
	movl	-8(%ebp), %esi
	.cfi_restore %esi
	leave
	.cfi_def_cfa %esp, 4
	.cfi_restore %ebp
	.if \pop
	ret	$\pop
	.else
	ret
	.endif
.endm

/* Push the caller SP and the function id, remembering both (and the
 * return address) for the test.  Only %esi, the probe's own, is used. */
.macro PUSH_HELPER_ARGS
	leal	8(%ebp), %esi
	movl	%esi, probe_caller_sp@GOTOFF(%ebx)
	pushl	%esi
	movl	4(%ebp), %esi
	movl	%esi, probe_return_address@GOTOFF(%ebx)
	pushl	probe_function@GOTOFF(%ebx)
.endm

/*
 * A function that returns through a hidden result pointer pops it (ret
 * $4), and its caller counts on that: probe_enter, which takes whatever
 * prototype its caller gives it, finds out how to return by calling
 * probe_enter_target (tests/probes.h) as probe_leave calls probe_target,
 * once Enter is over, then returns the same way.  Its own result is not
 * one: an x87 value the target left in st0 is dropped, so the x87 stack
 * stays empty whatever the target.  With probe_enter_target NULL (every
 * test but the corpus) it returns plainly.  Not probe_target: a test may
 * leave that set from a probe_leave while other threads call probe_enter.
 */
#define POPPED -12                      /* bytes the target popped */
ELT_ENTRY(probe_enter)
	PROLOG
	PUSH_HELPER_ARGS
	call	elt_helper_enter@PLT    /* pops both */
	subl	$16, %esp               /* as in probe_leave */
	movl	$0, POPPED(%ebp)
	cmpl	$0, probe_enter_target@GOTOFF(%ebx)
	je	2f
	pushl	20(%ebp)
	pushl	16(%ebp)
	pushl	12(%ebp)
	pushl	8(%ebp)
	call	*probe_enter_target@GOTOFF(%ebx)
	movl	%esp, %esi
	subl	%ebp, %esi
	addl	$40, %esi               /* 0, or 4 after ret $4 */
	movl	%esi, POPPED(%ebp)
	fxam
	fnstsw	%ax
	andw	$0x4100, %ax            /* C3 and C0 both set: st0 is empty */
	cmpw	$0x4100, %ax
	je	2f
	fstp	%st(0)
2:	cmpl	$0, POPPED(%ebp)
	jne	1f
	.cfi_remember_state
	EPILOG
	.cfi_restore_state
1:	EPILOG	4
ELT_END(probe_enter)
	.globl	probe_enter_end
probe_enter_end:

/*
 * The target gets the first four stack words this probe was given, so a
 * hidden struct return pointer passes through; a target that returns
 * through one pops it (ret $4), and so must this probe then: it measures
 * what the target popped and returns the same way.
 */
ELT_ENTRY(probe_leave)
	PROLOG
	subl	$16, %esp               /* %esp = %ebp - 24: 16-aligned if the caller was */
	pushl	20(%ebp)
	pushl	16(%ebp)
	pushl	12(%ebp)
	pushl	8(%ebp)
	call	*probe_target@GOTOFF(%ebx)
	movl	%esp, %esi
	subl	%ebp, %esi
	addl	$40, %esi               /* 0, or 4 after ret $4 */
	movl	%esi, POPPED(%ebp)
	leal	-24(%ebp), %esp
	movl	probe_continuation@GOTOFF(%ebx), %ecx
	PUSH_HELPER_ARGS
	/* The probe does not know its target's result type: the x87 Leave is
	 * right for every one, a float or double in st0 included. */
	call	elt_helper_leave_x87@PLT
	cmpl	$0, POPPED(%ebp)
	jne	1f
	.cfi_remember_state
	EPILOG
	.cfi_restore_state
1:	EPILOG	4
ELT_END(probe_leave)

ELT_ENTRY(probe_tailcall)
	PROLOG
	PUSH_HELPER_ARGS
	call	elt_helper_tailcall@PLT
	EPILOG
ELT_END(probe_tailcall)

/*
 * A JIT's tail call: Tailcall with the callee's arguments live, the frame
 * taken down (%ebx, %esi and %ebp restored), then a jump through
 * probe_target: the target finds the return address into our caller on
 * top of the stack and the caller's stack arguments above it, exactly as
 * they were given to us, and returns to our caller itself (with ret $4 if
 * it takes a hidden result pointer, as our caller expects of us).  So on
 * i386 the arguments, all on the stack, do pass through; the target must
 * have the caller's prototype.  The target's address travels in %eax:
 * cdecl passes nothing in registers (a regparm or fastcall callee would
 * need another scratch register).  With IBT, the target's endbr32 accepts
 * an indirect jmp as well as a call.
 */
ELT_ENTRY(probe_tailcall_jump)
	PROLOG
	PUSH_HELPER_ARGS
	call	elt_helper_tailcall@PLT
	movl	probe_target@GOTOFF(%ebx), %eax
	movl	-4(%ebp), %ebx
	.cfi_restore %ebx
	movl	-8(%ebp), %esi
	.cfi_restore %esi
	leave
	.cfi_def_cfa %esp, 4
	.cfi_restore %ebp
	jmp	*%eax
ELT_END(probe_tailcall_jump)

ELT_ENTRY(probe_pair)
	PROLOG
	PUSH_HELPER_ARGS
	call	elt_helper_enter@PLT
	PUSH_HELPER_ARGS
	call	elt_helper_leave@PLT
	EPILOG
ELT_END(probe_pair)

/* As a JIT emits it: the id an immediate, nothing stored to memory. */
.macro LEAN_CALL helper
	leal	8(%ebp), %esi
	pushl	%esi
	pushl	$PROBE_LEAN_ID
	call	\helper@PLT
.endm

ELT_ENTRY(probe_lean_pair)
	LEAN_PAIR
ELT_END(probe_lean_pair)

/* An idle hook is a load of the byte's address, a compare and a branch. */
.macro GUARDED_CALL helper
	movl	probe_armed@GOTOFF(%ebx), %esi
	cmpb	$0, (%esi)
	je	.Lskip\@
	LEAN_CALL \helper
.Lskip\@:
.endm

ELT_ENTRY(probe_guarded_pair)
	PROLOG
	GUARDED_CALL elt_helper_enter
	GUARDED_CALL elt_helper_leave
	EPILOG
ELT_END(probe_guarded_pair)

/* One test at the entry for both hooks: idle, the function is a bare
 * return after the test; armed, the lean pair.  The test comes before the
 * frame, so the GOT's address goes to %ecx (free at a call). */
ELT_ENTRY(probe_guarded_once)
	call	probe_pc_thunk_cx
	addl	$_GLOBAL_OFFSET_TABLE_, %ecx
	movl	probe_armed@GOTOFF(%ecx), %ecx
	cmpb	$0, (%ecx)
	jne	.Lonce_armed
	ret
.Lonce_armed:
	LEAN_PAIR
ELT_END(probe_guarded_once)

ELT_ENTRY(probe_bare)
	ret
ELT_END(probe_bare)

#include "../probes-data.h"

	ELT_OBJECT_NOTES
