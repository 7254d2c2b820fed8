/*
 * The three methods as an AArch64 JIT would emit them (doc/abi.md):
 * instances of the method shell (examples/method-shell/aarch64.h): Enter
 * in the prolog with the arguments live, the body, then Leave with either
 * the continuation in x2 (suspension: x0 holds no result) or the result
 * in x0 / d0 and x2 = 0 (final return).
 *
 *   method(K continuation in x0, int32 n in w1)
 *
 * After Leave each method checks that x2 still holds the continuation:
 * a helper that clobbered it would make the runtime lose the method.
 */
#include "asm.h"
#include "../method-shell/shell.h"

	.text
	SHELL_METHOD seed_Work, seed_work_body, SHELL_RET_INT, seed_continuation_clobbered
	SHELL_METHOD seed_WorkVoid, seed_work_void_body, SHELL_RET_VOID, seed_continuation_clobbered
	SHELL_METHOD seed_WorkDouble, seed_work_double_body, SHELL_RET_DOUBLE, seed_continuation_clobbered

/* The dispatcher's call into a method: C cannot read x2 after a call.
 *   void seed_invoke(method, continuation, n, struct outcome *out) */
ELT_ENTRY(seed_invoke)
	ELT_SIGN_LR
	stp	x29, x30, [sp, #-32]!
	.cfi_def_cfa_offset 32
	.cfi_offset x29, -32
	.cfi_offset x30, -24
	mov	x29, sp
	str	x19, [sp, #16]
	.cfi_offset x19, -16
	mov	x19, x3
	mov	x16, x0
	mov	x0, x1
	mov	w1, w2
	blr	x16
	str	x0, [x19, #0]
	str	d0, [x19, #8]
	str	x2, [x19, #16]
	ldr	x19, [sp, #16]
	ldp	x29, x30, [sp], #32
	.cfi_def_cfa_offset 0
	.cfi_restore x19
	.cfi_restore x29
	.cfi_restore x30
	ELT_AUTH_LR
	ret
ELT_END(seed_invoke)

	ELT_OBJECT_NOTES
