/*
 * The body of the benchmark's lean pair, the same on every port:
 * probe_lean_pair is it, and probe_guarded_once runs it when the armed
 * byte is set.  Each tests/arch/<abi>/probes.S includes this and defines
 * the three macros it uses: PROLOG and EPILOG (the instrumented
 * function's frame) and LEAN_CALL (a helper's call as a JIT emits it).
 */
.macro LEAN_PAIR
	PROLOG
	LEAN_CALL elt_helper_enter
	LEAN_CALL elt_helper_leave
	EPILOG
.endm
