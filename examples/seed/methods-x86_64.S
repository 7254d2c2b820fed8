/*
 * The three methods as an x86-64 SysV JIT would emit them (doc/abi.md):
 * instances of the method shell (examples/method-shell/x86_64.h): Enter
 * in the prolog with the arguments live, the body, then Leave with either
 * the continuation in %rcx (suspension: %rax holds no result) or the
 * result in %rax / %xmm0 and %rcx = 0 (final return).
 *
 *   method(K continuation in %rdi, int32 n in %esi)
 *
 * After Leave each method checks that %rcx still holds the continuation:
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
