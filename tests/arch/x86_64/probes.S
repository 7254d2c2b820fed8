/*
 * x86-64 System V probes (tests/probes.h): instrumented functions that
 * call the helpers exactly as doc/abi.md tells a JIT to.
 */
#include "asm.h"
#include "../../probes.h"
#include "../lean-pair.h"

/* Push the caller SP and the function id, remembering both for the test. */
.macro PUSH_HELPER_ARGS
	leaq	16(%rbp), %r11
	movq	%r11, probe_caller_sp(%rip)
	pushq	%r11
	movq	8(%rbp), %r11
	movq	%r11, probe_return_address(%rip)
	pushq	probe_function(%rip)
.endm

.macro PROLOG
	pushq	%rbp
	.cfi_adjust_cfa_offset 8
	.cfi_rel_offset %rbp, 0
	movq	%rsp, %rbp
	.cfi_def_cfa_register %rbp
.endm

.macro EPILOG
	popq	%rbp
	.cfi_def_cfa %rsp, 8
	ret
.endm

	.text
ELT_ENTRY(probe_enter)
	PROLOG
	PUSH_HELPER_ARGS
	call	elt_helper_enter
	EPILOG
ELT_END(probe_enter)
	.globl	probe_enter_end
probe_enter_end:

ELT_ENTRY(probe_leave)
	PROLOG
	call	*probe_target(%rip)     /* %rdi (a struct return buffer) passes through */
	movq	probe_continuation(%rip), %rcx
	PUSH_HELPER_ARGS
	/* The probe does not know its target's result type: the x87 Leave is
	 * right for every one, a long double in st0 included. */
	call	elt_helper_leave_x87
	EPILOG
ELT_END(probe_leave)

ELT_ENTRY(probe_tailcall)
	PROLOG
	PUSH_HELPER_ARGS
	call	elt_helper_tailcall
	EPILOG
ELT_END(probe_tailcall)

/*
 * A JIT's tail call: Tailcall with the callee's arguments live (here the
 * probe's own: %rdi, %rsi, ..., %xmm0-%xmm7, %al), the frame taken down,
 * then a jump through probe_target: the target finds the return address
 * into our caller on top of the stack and returns there itself.  Stack
 * arguments are not forwarded (the target has the same prototype and
 * would find the caller's where they are, but nothing here checks that).
 * With IBT, the target's endbr64 accepts an indirect jmp as well as a call.
 */
ELT_ENTRY(probe_tailcall_jump)
	PROLOG
	PUSH_HELPER_ARGS
	call	elt_helper_tailcall
	popq	%rbp
	.cfi_def_cfa %rsp, 8
	.cfi_restore %rbp
	jmpq	*probe_target(%rip)
ELT_END(probe_tailcall_jump)

ELT_ENTRY(probe_pair)
	PROLOG
	PUSH_HELPER_ARGS
	call	elt_helper_enter
	PUSH_HELPER_ARGS
	call	elt_helper_leave
	EPILOG
ELT_END(probe_pair)

/* As a JIT emits it: the id an immediate, nothing stored to memory, and
 * the helper called through its address in memory (here the GOT's slot),
 * the first form doc/abi.md gives, not through a PLT entry's extra jump
 * (doc/performance.md#idle). */
.macro LEAN_CALL helper
	leaq	16(%rbp), %r11
	pushq	%r11
	pushq	$PROBE_LEAN_ID
	call	*\helper@GOTPCREL(%rip)
.endm

ELT_ENTRY(probe_lean_pair)
	LEAN_PAIR
ELT_END(probe_lean_pair)

/* An idle hook is a load of the byte's address, a compare and a branch. */
.macro GUARDED_CALL helper
	movq	probe_armed(%rip), %r11
	cmpb	$0, (%r11)
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
 * return after the test; armed, the lean pair. */
ELT_ENTRY(probe_guarded_once)
	movq	probe_armed(%rip), %r11
	cmpb	$0, (%r11)
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
