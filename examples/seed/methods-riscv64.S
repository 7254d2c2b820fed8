/*
 * The three methods as a riscv64 LP64D JIT would emit them (doc/abi.md):
 * instances of the method shell (examples/method-shell/riscv64.h): Enter
 * in the prolog with the arguments live, the body, then Leave with either
 * the continuation in a2 (suspension: a0 holds no result) or the result
 * in a0 / fa0 and a2 = 0 (final return).
 *
 *   method(K continuation in a0, int32 n in a1)
 *
 * Every method keeps the standard frame record (s0 = caller SP, ra at
 * s0-8), which is where the library reads the return address.  After Leave
 * each method checks that a2 still holds the continuation: a helper that
 * clobbered it would make the runtime lose the method.
 */
#include "asm.h"
#include "../method-shell/shell.h"

	.text
	SHELL_METHOD seed_Work, seed_work_body, SHELL_RET_INT, seed_continuation_clobbered
	SHELL_METHOD seed_WorkVoid, seed_work_void_body, SHELL_RET_VOID, seed_continuation_clobbered
	SHELL_METHOD seed_WorkDouble, seed_work_double_body, SHELL_RET_DOUBLE, seed_continuation_clobbered

/* The dispatcher's call into a method (C cannot read the continuation
 * return register after a call):
 *   void seed_invoke(void (*method)(void), struct shell_call *call) */
	SHELL_INVOKE seed_invoke

	ELT_OBJECT_NOTES
