/*
 * The probes' variables (tests/probes.h), the same on every port: what the
 * test sets before calling a probe (the function id, the target, the
 * continuation, the armed byte's address for probe_guarded_pair), what
 * the probe saw (caller SP, return address), and the
 * probes' addresses read through memory so the compiler cannot fold the
 * calls.  Each tests/arch/<abi>/probes.S includes this once, after its
 * code, in the same object: the probes reach these variables PC-relative
 * (or GOT-relative on i386), which needs no relocation across objects.
 * Only the word size differs between ports.
 */
#if __SIZEOF_POINTER__ == 8
# define PROBE_WORD .quad
# define PROBE_WORD_LOG2 3
#elif __SIZEOF_POINTER__ == 4
# define PROBE_WORD .long
# define PROBE_WORD_LOG2 2
#else
# error "tests/arch/probes-data.h: a pointer of neither 4 nor 8 bytes"
#endif

	.data
	.p2align PROBE_WORD_LOG2
	.globl	probe_function, probe_target, probe_continuation
	.globl	probe_caller_sp, probe_return_address, probe_armed
	.globl	probe_enter_address, probe_leave_address, probe_tailcall_address
	.globl	probe_tailcall_jump_address
probe_function:		PROBE_WORD 0
probe_target:		PROBE_WORD 0
probe_continuation:	PROBE_WORD 0
probe_caller_sp:	PROBE_WORD 0
probe_return_address:	PROBE_WORD 0
probe_armed:		PROBE_WORD 0
probe_enter_address:	PROBE_WORD probe_enter
probe_leave_address:	PROBE_WORD probe_leave
probe_tailcall_address:	PROBE_WORD probe_tailcall
probe_tailcall_jump_address: PROBE_WORD probe_tailcall_jump
#if defined(__i386__)
/* i386 only: where a hidden-pointer callee's `ret $4` is learned
 * (tests/probes.h, probe_enter in tests/arch/i386/probes.S). */
	.globl	probe_enter_target
probe_enter_target:	PROBE_WORD 0
#endif

#undef PROBE_WORD
#undef PROBE_WORD_LOG2
