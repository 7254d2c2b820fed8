/*
 * The seed's three methods as a JIT would emit them (doc/abi.md): each an
 * instance of this ABI's method shell (examples/method-shell/<abi>.h,
 * picked by shell.h from the compiler's macros), so one file serves every
 * ABI.  Enter runs in the prolog with the arguments live, then the C body,
 * then Leave with either the continuation in the continuation return
 * register (a suspension: the result registers hold no result) or the
 * result in the integer or floating-point return register and zero in
 * the continuation register (the final return).
 *
 *   method(K continuation, int32 n), in the ABI's first two argument slots
 *
 * After Leave each method checks that the continuation register still
 * holds what the shell put there: a helper that clobbered it would make
 * the runtime lose the method (seed_continuation_clobbered counts it).
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
