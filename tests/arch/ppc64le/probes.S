/*
 * ppc64le (ELFv2) probes (tests/probes.h): instrumented functions that
 * call the helpers exactly as doc/abi.md tells a JIT to.  They are called
 * through C function pointers (r12 = their address), so each has the
 * usual global entry that sets up its TOC pointer.
 */
#include "asm.h"
#include "../../probes.h"
#include "../lean-pair.h"

/* header 32, then a parameter save area whose first two doublewords are
 * the helper's inputs (doc/abi.md), 16 spare: quadword aligned */
#define PROBE_FRAME 112
#define HELPER_ID   32
#define HELPER_SP   40

.macro GLOBAL_ENTRY name
0:	addis	%r2, %r12, (.TOC. - 0b)@ha
	addi	%r2, %r2, (.TOC. - 0b)@l
	.localentry \name, . - \name
.endm

.macro PROLOG
	mflr	%r0
	std	%r0, 16(%r1)            /* LR save: the return address */
	.cfi_offset 65, 16
	stdu	%r1, -PROBE_FRAME(%r1)
	.cfi_adjust_cfa_offset PROBE_FRAME
.endm

.macro EPILOG
	addi	%r1, %r1, PROBE_FRAME
	.cfi_adjust_cfa_offset -PROBE_FRAME
	ld	%r0, 16(%r1)
	mtlr	%r0
	.cfi_restore 65
	blr
.endm

/* The helper's inputs, remembering both for the test; only r11 and r12
 * are used, so every argument and result register stays live. */
.macro HELPER_ARGS
	addi	%r11, %r1, PROBE_FRAME          /* caller SP */
	std	%r11, HELPER_SP(%r1)
	addis	%r12, %r2, probe_caller_sp@toc@ha
	std	%r11, probe_caller_sp@toc@l(%r12)
	ld	%r11, PROBE_FRAME + 16(%r1)
	addis	%r12, %r2, probe_return_address@toc@ha
	std	%r11, probe_return_address@toc@l(%r12)
	addis	%r12, %r2, probe_function@toc@ha
	ld	%r11, probe_function@toc@l(%r12)
	std	%r11, HELPER_ID(%r1)
.endm

	.text
ELT_ENTRY(probe_enter)
	GLOBAL_ENTRY probe_enter
	PROLOG
	HELPER_ARGS
	bl	elt_helper_enter
	nop
	EPILOG
ELT_END(probe_enter)
	.globl	probe_enter_end
probe_enter_end:

ELT_ENTRY(probe_leave)
	GLOBAL_ENTRY probe_leave
	PROLOG
	addis	%r12, %r2, probe_target@toc@ha
	ld	%r12, probe_target@toc@l(%r12)
	mtctr	%r12
	std	%r2, 24(%r1)
	/* r3, the address of a result buffer, passes through; at Leave it
	 * must hold that address (doc/abi.md), which the GCC-compiled
	 * target hands back in r3 (a JIT that did not keep it reloads it) */
	bctrl
	ld	%r2, 24(%r1)
	addis	%r11, %r2, probe_continuation@toc@ha
	ld	%r5, probe_continuation@toc@l(%r11)
	HELPER_ARGS
	bl	elt_helper_leave
	nop
	EPILOG
ELT_END(probe_leave)

ELT_ENTRY(probe_tailcall)
	GLOBAL_ENTRY probe_tailcall
	PROLOG
	HELPER_ARGS
	bl	elt_helper_tailcall
	nop
	EPILOG
ELT_END(probe_tailcall)

/*
 * A JIT's tail call: Tailcall with the callee's arguments live (here the
 * probe's own: r3-r10, f1-f13, v2-v13) and the return address still in
 * the caller's LR save doubleword (the library reads it there), then the
 * frame taken down (lr holds the return into our caller again) and a
 * jump through probe_target: the target returns to our caller itself.
 * Register arguments only: stack arguments are not forwarded (the target
 * has the same prototype and would find the caller's parameter save area
 * where it is, but nothing checks that).
 *
 * ELFv2 wants r12 = the address of a function entered at its global
 * entry point, which computes the target's TOC pointer from it; so the
 * jump goes through ctr with the target in r12 as well.  The target then
 * changes r2 and returns straight to our caller, so the caller must restore
 * its TOC pointer after the call, as any indirect or PLT call does (ld
 * r2,24(r1) after the bctrl, or the nop a PLT stub's save turns into it):
 * this probe is reached only through function pointers.  A direct call
 * within one module (bl to the local entry, its nop left a nop) restores
 * nothing, which is why compilers tail-call only functions that share the
 * caller's TOC.
 */
ELT_ENTRY(probe_tailcall_jump)
	GLOBAL_ENTRY probe_tailcall_jump
	PROLOG
	HELPER_ARGS
	bl	elt_helper_tailcall
	nop
	addis	%r12, %r2, probe_target@toc@ha
	ld	%r12, probe_target@toc@l(%r12)
	mtctr	%r12
	addi	%r1, %r1, PROBE_FRAME
	.cfi_adjust_cfa_offset -PROBE_FRAME
	ld	%r0, 16(%r1)
	mtlr	%r0
	.cfi_restore 65
	bctr
ELT_END(probe_tailcall_jump)

ELT_ENTRY(probe_pair)
	GLOBAL_ENTRY probe_pair
	PROLOG
	HELPER_ARGS
	bl	elt_helper_enter
	nop
	HELPER_ARGS
	bl	elt_helper_leave
	nop
	EPILOG
ELT_END(probe_pair)

/* As a JIT emits it: the id an immediate, nothing stored but the two
 * doublewords. */
.macro LEAN_CALL helper
	addi	%r11, %r1, PROBE_FRAME
	std	%r11, HELPER_SP(%r1)
	li	%r11, PROBE_LEAN_ID
	std	%r11, HELPER_ID(%r1)
	bl	\helper
	nop
.endm

ELT_ENTRY(probe_lean_pair)
	GLOBAL_ENTRY probe_lean_pair
	LEAN_PAIR
ELT_END(probe_lean_pair)

/* An idle hook loads the byte's address and the byte, compares and
 * branches: cr0 is volatile and carries no argument. */
.macro GUARDED_CALL helper
	addis	%r12, %r2, probe_armed@toc@ha
	ld	%r12, probe_armed@toc@l(%r12)
	lbz	%r12, 0(%r12)
	cmpwi	%r12, 0
	beq	.Lskip\@
	LEAN_CALL \helper
.Lskip\@:
.endm

ELT_ENTRY(probe_guarded_pair)
	GLOBAL_ENTRY probe_guarded_pair
	PROLOG
	GUARDED_CALL elt_helper_enter
	GUARDED_CALL elt_helper_leave
	EPILOG
ELT_END(probe_guarded_pair)

/* One test at the entry for both hooks: idle, the function is a bare
 * return after the test; armed, the lean pair. */
ELT_ENTRY(probe_guarded_once)
	GLOBAL_ENTRY probe_guarded_once
	addis	%r12, %r2, probe_armed@toc@ha
	ld	%r12, probe_armed@toc@l(%r12)
	lbz	%r12, 0(%r12)
	cmpwi	%r12, 0
	bne	.Lonce_armed
	blr
.Lonce_armed:
	LEAN_PAIR
ELT_END(probe_guarded_once)

ELT_ENTRY(probe_bare)
	blr
ELT_END(probe_bare)

#include "../probes-data.h"

	ELT_OBJECT_NOTES
