/*
 * riscv64 LP64D probes (tests/probes.h): instrumented functions that call
 * the helpers exactly as doc/abi.md tells a JIT to.  Every probe keeps the
 * standard frame record (ra at caller SP - 8, s0 = caller SP), and calls the
 * helpers through the PLT, so the first call of each runs the lazy
 * resolver: the stack inputs must survive it.
 */
#include "asm.h"
#include "../../probes.h"
#include "../lean-pair.h"

/* Reserve 16 bytes, store the function id and the caller SP there,
 * remembering both (and the return address) for the test.  Only t0 and t1
 * are used: every argument and result register stays live. */
.macro HELPER_ARGS
	sd	s0, probe_caller_sp, t0
	ld	t1, -8(s0)
	sd	t1, probe_return_address, t0
	ld	t1, probe_function
	addi	sp, sp, -16
	sd	t1, 0(sp)
	sd	s0, 8(sp)
.endm

.macro PROLOG
	addi	sp, sp, -16
	.cfi_def_cfa_offset 16
	sd	ra, 8(sp)
	.cfi_rel_offset ra, 8
	sd	s0, 0(sp)
	.cfi_rel_offset s0, 0
	addi	s0, sp, 16
	.cfi_def_cfa s0, 0
.endm

.macro EPILOG
	ld	ra, -8(s0)
	.cfi_restore ra
	addi	sp, s0, -16             /* where the helper left it anyway */
	.cfi_def_cfa sp, 16
	ld	s0, 0(sp)
	.cfi_restore s0
	addi	sp, sp, 16
	.cfi_def_cfa_offset 0
	ret
.endm

	.text
ELT_ENTRY(probe_enter)
	PROLOG
	HELPER_ARGS
	call	elt_helper_enter@plt
	EPILOG
ELT_END(probe_enter)
	.globl	probe_enter_end
probe_enter_end:

ELT_ENTRY(probe_leave)
	PROLOG
	ld	t0, probe_target
	jalr	t0                      /* a0 (a result's address) passes through */
	ld	a2, probe_continuation  /* the continuation return register */
	HELPER_ARGS
	call	elt_helper_leave@plt
	EPILOG
ELT_END(probe_leave)

ELT_ENTRY(probe_tailcall)
	PROLOG
	HELPER_ARGS
	call	elt_helper_tailcall@plt
	EPILOG
ELT_END(probe_tailcall)

/*
 * A JIT's tail call: Tailcall with the callee's arguments live (here the
 * probe's own: a0-a7, fa0-fa7) and the frame record still in place (the
 * library reads the return address at caller SP - 8), then the frame taken
 * down (ra holds the return into our caller again) and a jump through
 * probe_target: the target returns to our caller itself.  Register
 * arguments only: stack arguments are not forwarded (the target has the
 * same prototype and would find the caller's where they are, but nothing
 * checks that).
 *
 * The target goes in t1, loaded after the helper returns (a PLT call may
 * change the temporaries): not in t0, since a jr through x1 or x5 is a
 * return to the hardware's return-address stack, which the jump is not.
 */
ELT_ENTRY(probe_tailcall_jump)
	PROLOG
	HELPER_ARGS
	call	elt_helper_tailcall@plt
	ld	t1, probe_target
	ld	ra, -8(s0)
	.cfi_restore ra
	addi	sp, s0, -16
	.cfi_def_cfa sp, 16
	ld	s0, 0(sp)
	.cfi_restore s0
	addi	sp, sp, 16
	.cfi_def_cfa_offset 0
	jr	t1
ELT_END(probe_tailcall_jump)

ELT_ENTRY(probe_pair)
	PROLOG
	HELPER_ARGS
	call	elt_helper_enter@plt
	HELPER_ARGS
	call	elt_helper_leave@plt
	EPILOG
ELT_END(probe_pair)

/* As a JIT emits it: the id an immediate, nothing stored but the two
 * words. */
.macro LEAN_CALL helper
	li	t1, PROBE_LEAN_ID
	addi	sp, sp, -16
	sd	t1, 0(sp)
	sd	s0, 8(sp)
	call	\helper@plt
.endm

ELT_ENTRY(probe_lean_pair)
	LEAN_PAIR
ELT_END(probe_lean_pair)

/* An idle hook loads the byte's address and the byte, and branches. */
.macro GUARDED_CALL helper
	ld	t0, probe_armed
	lbu	t0, 0(t0)
	beqz	t0, .Lskip\@
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
	ld	t0, probe_armed
	lbu	t0, 0(t0)
	bnez	t0, .Lonce_armed
	ret
.Lonce_armed:
	LEAN_PAIR
ELT_END(probe_guarded_once)

ELT_ENTRY(probe_bare)
	ret
ELT_END(probe_bare)

#include "../probes-data.h"

	ELT_OBJECT_NOTES
