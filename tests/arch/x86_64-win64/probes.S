/*
 * x86-64 Windows probes (tests/probes.h): instrumented functions that
 * call the helpers exactly as doc/abi.md tells a JIT to.
 */
#include "asm.h"

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

ELT_ENTRY(probe_pair)
	PROLOG
	PUSH_HELPER_ARGS
	call	elt_helper_enter
	PUSH_HELPER_ARGS
	call	elt_helper_leave
	EPILOG
ELT_END(probe_pair)

ELT_ENTRY(probe_bare)
	PROLOG
	EPILOG
ELT_END(probe_bare)

	.data
	.p2align 3
	.globl	probe_function, probe_target, probe_continuation
	.globl	probe_caller_sp, probe_return_address
	.globl	probe_enter_address, probe_leave_address, probe_tailcall_address
probe_function:		.quad 0
probe_target:		.quad 0
probe_continuation:	.quad 0
probe_caller_sp:	.quad 0
probe_return_address:	.quad 0
probe_enter_address:	.quad probe_enter
probe_leave_address:	.quad probe_leave
probe_tailcall_address:	.quad probe_tailcall

	ELT_OBJECT_NOTES
