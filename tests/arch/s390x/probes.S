/*
 * s390x probes (tests/probes.h): instrumented functions that call the
 * helpers exactly as doc/abi.md tells a JIT to.  Each has the ABI's
 * usual frame: %r14/%r15 saved in the save area its caller provided,
 * then 160 bytes of save area for its own callees and 16 bytes of
 * outgoing-argument area for the helpers' inputs.
 *
 * Scratch registers while the arguments are live: %r0, %r1 and %r14
 * (already saved, and the call overwrites it anyway).
 */
#include "asm.h"
#include "../../probes.h"
#include "../lean-pair.h"

#define FRAME 176                       /* save area + function id + caller SP */

/* Store the function id and the caller SP for the helper, remembering
 * both and the return address for the test. */
.macro STORE_HELPER_ARGS
	la	%r0, FRAME(%r15)                /* caller SP: %r15 at our entry */
	stg	%r0, 168(%r15)
	larl	%r1, probe_caller_sp
	stg	%r0, 0(%r1)
	lg	%r0, FRAME + 112(%r15)          /* our %r14, saved by the prolog */
	larl	%r1, probe_return_address
	stg	%r0, 0(%r1)
	larl	%r1, probe_function
	mvc	160(8, %r15), 0(%r1)
.endm

.macro PROLOG
	stmg	%r14, %r15, 112(%r15)
	.cfi_offset %r14, -48
	.cfi_offset %r15, -40
	lay	%r15, -FRAME(%r15)
	.cfi_adjust_cfa_offset FRAME
.endm

.macro EPILOG
	lmg	%r14, %r15, FRAME + 112(%r15)
	.cfi_restore %r14
	.cfi_restore %r15
	.cfi_def_cfa_offset 160
	br	%r14
.endm

	.text
ELT_ENTRY(probe_enter)
	PROLOG
	STORE_HELPER_ARGS
	brasl	%r14, elt_helper_enter@PLT
	EPILOG
ELT_END(probe_enter)
	.globl	probe_enter_end
probe_enter_end:

ELT_ENTRY(probe_leave)
	PROLOG
	larl	%r1, probe_target
	lg	%r1, 0(%r1)
	basr	%r14, %r1               /* %r2 (a hidden result pointer) passes through */
	larl	%r1, probe_continuation
	lg	%r4, 0(%r1)
	STORE_HELPER_ARGS
	brasl	%r14, elt_helper_leave@PLT
	EPILOG
ELT_END(probe_leave)

ELT_ENTRY(probe_tailcall)
	PROLOG
	STORE_HELPER_ARGS
	brasl	%r14, elt_helper_tailcall@PLT
	EPILOG
ELT_END(probe_tailcall)

/*
 * A JIT's tail call: Tailcall with the callee's arguments live (here the
 * probe's own: %r2-%r6, %f0/%f2/%f4/%f6) and our %r14 still in our
 * caller's save area (the library reads the return address there), then
 * the frame taken down (%r14 and %r15 as our caller left them) and a jump
 * through probe_target with br: the target saves %r14, the return into
 * our caller, in the same save area and returns there itself.  Register
 * arguments only: stack arguments (at 160(%r15) in our caller's frame) are
 * not forwarded (the target has the same prototype and would find them,
 * but nothing checks that).  The target's address travels in %r1, which
 * carries nothing at a call.
 */
ELT_ENTRY(probe_tailcall_jump)
	PROLOG
	STORE_HELPER_ARGS
	brasl	%r14, elt_helper_tailcall@PLT
	larl	%r1, probe_target
	lg	%r1, 0(%r1)
	lmg	%r14, %r15, FRAME + 112(%r15)
	.cfi_restore %r14
	.cfi_restore %r15
	.cfi_def_cfa_offset 160
	br	%r1
ELT_END(probe_tailcall_jump)

ELT_ENTRY(probe_pair)
	PROLOG
	STORE_HELPER_ARGS
	brasl	%r14, elt_helper_enter@PLT
	STORE_HELPER_ARGS
	brasl	%r14, elt_helper_leave@PLT
	EPILOG
ELT_END(probe_pair)

/* As a JIT emits it: the id an immediate, stored as one (mvghi, z10 like
 * lgrl below: Debian's baseline is z196), nothing stored but the two
 * doublewords. */
.macro LEAN_CALL helper
	la	%r0, FRAME(%r15)
	stg	%r0, 168(%r15)
	mvghi	160(%r15), PROBE_LEAN_ID
	brasl	%r14, \helper@PLT
.endm

ELT_ENTRY(probe_lean_pair)
	LEAN_PAIR
ELT_END(probe_lean_pair)

/* An idle hook loads the byte's address (lgrl: probe_armed is doubleword
 * aligned, as it needs), compares the byte and branches. */
.macro GUARDED_CALL helper
	lgrl	%r1, probe_armed
	cli	0(%r1), 0
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
	lgrl	%r1, probe_armed
	cli	0(%r1), 0
	jne	.Lonce_armed
	br	%r14
.Lonce_armed:
	LEAN_PAIR
ELT_END(probe_guarded_once)

ELT_ENTRY(probe_bare)
	br	%r14
ELT_END(probe_bare)

#include "../probes-data.h"

	ELT_OBJECT_NOTES
