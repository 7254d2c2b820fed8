/*
 * The three methods as an s390x JIT would emit them (doc/abi.md):
 * instances of the method shell (examples/method-shell/s390x.h): Enter
 * in the prolog with the arguments live, the body, then Leave with either
 * the continuation in %r4 (suspension: %r2 holds no result) or the
 * result in %r2 / %f0 and %r4 = 0 (final return).
 *
 *   method(K continuation in %r2, int32 n in %r3)
 *
 * After Leave each method checks that %r4 still holds the continuation:
 * a helper that clobbered it would make the runtime lose the method.
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
