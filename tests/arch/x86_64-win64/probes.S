/*
 * x86-64 Windows probes (tests/probes.h): instrumented functions that
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

/* %rbp frame, and the 32-byte home area a callee may use. */
.macro PROLOG
	pushq	%rbp
	.seh_pushreg %rbp
	movq	%rsp, %rbp
	.seh_setframe %rbp, 0
	subq	$32, %rsp
	.seh_stackalloc 32
	.seh_endprologue
.endm

.macro EPILOG
	leaq	0(%rbp), %rsp
	popq	%rbp
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
	call	*probe_target(%rip)     /* %rcx (a result buffer) passes through */
	movq	probe_continuation(%rip), %rcx
	PUSH_HELPER_ARGS
	call	elt_helper_leave
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
 * probe's own: %rcx, %rdx, %r8, %r9, %xmm0-%xmm3), the frame taken down,
 * then a jump through probe_target: the target finds the return address
 * into our caller on top of the stack, the home area its caller reserved
 * above it, and returns to our caller itself.  Stack arguments are not
 * forwarded (the target has the same prototype and would find the
 * caller's where they are, but nothing here checks that).
 *
 * The epilog is one the Win64 unwinder recognizes (RtlVirtualUnwind
 * emulates the rest of an epilog it is in): lea from the frame register,
 * pop, then a jmp through a RIP-relative memory operand (ModRM mod 00),
 * one of the jmp forms the x64 ABI allows to end an epilog.
 */
ELT_ENTRY(probe_tailcall_jump)
	PROLOG
	PUSH_HELPER_ARGS
	call	elt_helper_tailcall
	leaq	0(%rbp), %rsp
	popq	%rbp
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

/* As a JIT emits it: the id an immediate, nothing stored to memory. */
.macro LEAN_CALL helper
	leaq	16(%rbp), %r11
	pushq	%r11
	pushq	$PROBE_LEAN_ID
	call	\helper
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
	.seh_endprologue
	ret
ELT_END(probe_bare)

#include "../probes-data.h"

	ELT_OBJECT_NOTES
