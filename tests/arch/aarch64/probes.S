/*
 * AArch64 probes (tests/probes.h): instrumented functions that call the
 * helpers exactly as doc/abi.md tells a JIT to.  Each has a frame record
 * (x29 points at its saved x29, x30) when it calls a helper.
 */
#include "asm.h"
#include "../../probes.h"
#include "../lean-pair.h"

/* Reserve the helper's two words: the function id and the caller SP,
 * remembering both, and the return address, for the test.  x9-x11 are
 * free here: every argument register stays live. */
.macro PUSH_HELPER_ARGS
	add	x9, x29, #16            /* caller SP: above our frame record */
	adrp	x10, probe_caller_sp
	str	x9, [x10, :lo12:probe_caller_sp]
	ldr	x11, [x29, #8]          /* our return address */
	adrp	x10, probe_return_address
	str	x11, [x10, :lo12:probe_return_address]
	adrp	x10, probe_function
	ldr	x10, [x10, :lo12:probe_function]
	stp	x10, x9, [sp, #-16]!
.endm

.macro PROLOG
	stp	x29, x30, [sp, #-16]!
	.cfi_def_cfa_offset 16
	.cfi_offset x29, -16
	.cfi_offset x30, -8
	mov	x29, sp
	.cfi_def_cfa_register x29
.endm

.macro EPILOG
	ldp	x29, x30, [sp], #16
	.cfi_def_cfa sp, 0
	.cfi_restore x29
	.cfi_restore x30
	ret
.endm

	.text
ELT_ENTRY(probe_enter)
	PROLOG
	PUSH_HELPER_ARGS
	bl	elt_helper_enter        /* releases the two words */
	EPILOG
ELT_END(probe_enter)
	.globl	probe_enter_end
probe_enter_end:

/* x8, the address of a result buffer, goes to the target, which need not
 * keep it: like a JIT, the probe reloads it for Leave (doc/abi.md). */
ELT_ENTRY(probe_leave)
	PROLOG
	str	x8, [sp, #-16]!         /* under the frame record; SP stays aligned */
	adrp	x16, probe_target
	ldr	x16, [x16, :lo12:probe_target]
	blr	x16                     /* x0-x8 (x8: a result buffer) pass through */
	ldr	x8, [sp], #16
	adrp	x9, probe_continuation
	ldr	x2, [x9, :lo12:probe_continuation]
	PUSH_HELPER_ARGS
	bl	elt_helper_leave
	EPILOG
ELT_END(probe_leave)

ELT_ENTRY(probe_tailcall)
	PROLOG
	PUSH_HELPER_ARGS
	bl	elt_helper_tailcall
	EPILOG
ELT_END(probe_tailcall)

/*
 * A JIT's tail call: Tailcall with the callee's arguments live (here the
 * probe's own: x0-x8, q0-q7) and the frame record still in place (the
 * library reads the return address from it), then the record taken down
 * and a jump through probe_target: x30 holds the return into our caller
 * again, so the target returns there itself.  Register arguments only:
 * stack arguments are not forwarded (the target has the same prototype
 * and would find the caller's where they are, but nothing checks that).
 *
 * BTI: a C function starts with `bti c`, which accepts a blr from any
 * register but a br only through x16 or x17 (the registers PLT stubs and
 * veneers use; they carry no argument), so the target goes in x16.
 * PAC: this probe signs x30 on entry (with pac-ret builds) and must
 * authenticate it, with the same SP, before leaving: the target signs the
 * x30 it is entered with, and would sign a signed pointer.
 */
ELT_ENTRY(probe_tailcall_jump)
	ELT_SIGN_LR
	PROLOG
	PUSH_HELPER_ARGS
	/* The saved x30 is signed: the test wants the return address the
	 * library reports, with the code stripped (xpaclri: x30 only, a NOP
	 * without PAC; the bl overwrites x30 anyway). */
	xpaclri
	adrp	x10, probe_return_address
	str	x30, [x10, :lo12:probe_return_address]
	bl	elt_helper_tailcall     /* releases the two words */
	adrp	x16, probe_target
	ldr	x16, [x16, :lo12:probe_target]
	ldp	x29, x30, [sp], #16
	.cfi_def_cfa sp, 0
	.cfi_restore x29
	.cfi_restore x30
	ELT_AUTH_LR
	br	x16
ELT_END(probe_tailcall_jump)

ELT_ENTRY(probe_pair)
	PROLOG
	PUSH_HELPER_ARGS
	bl	elt_helper_enter
	PUSH_HELPER_ARGS
	bl	elt_helper_leave
	EPILOG
ELT_END(probe_pair)

/* As a JIT emits it: the id an immediate, nothing stored but the two
 * words. */
.macro LEAN_CALL helper
	add	x9, x29, #16
	mov	x10, #PROBE_LEAN_ID
	stp	x10, x9, [sp, #-16]!
	bl	\helper
.endm

ELT_ENTRY(probe_lean_pair)
	LEAN_PAIR
ELT_END(probe_lean_pair)

/* An idle hook loads the byte's address and the byte, and branches. */
.macro GUARDED_CALL helper
	adrp	x9, probe_armed
	ldr	x9, [x9, :lo12:probe_armed]
	ldrb	w9, [x9]
	cbz	w9, .Lskip\@
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
	adrp	x9, probe_armed
	ldr	x9, [x9, :lo12:probe_armed]
	ldrb	w9, [x9]
	cbnz	w9, .Lonce_armed
	ret
.Lonce_armed:
	LEAN_PAIR
ELT_END(probe_guarded_once)

ELT_ENTRY(probe_bare)
	ret
ELT_END(probe_bare)

#include "../probes-data.h"

	ELT_OBJECT_NOTES
