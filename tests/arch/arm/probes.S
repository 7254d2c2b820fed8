/*
 * 32-bit ARM probes (tests/probes.h): instrumented functions that call
 * the helpers exactly as doc/abi.md tells a JIT to.  The arguments the C
 * caller placed (r0-r3, d0-d7 on hard-float, the stack) stay live; only
 * r4 (saved), ip and lr are used as scratch.
 */
#include "asm.h"

/* push {r4, lr}: lr, the return address, lands just below the caller SP,
 * where the helpers read it; 8 bytes keep the stack 8-byte aligned. */
.macro PROLOG
	push	{r4, lr}
	.save	{r4, lr}
	.cfi_adjust_cfa_offset 8
	.cfi_rel_offset r4, 0
	.cfi_rel_offset lr, 4
.endm

.macro EPILOG
	pop	{r4, pc}
.endm

/* Push the function id and the caller SP, remembering both (and the
 * return address) for the test; then call the helper, which removes them.
 * No unwind annotation for the push: the helper's own describes the two
 * words as its own (it pops them), and the bl follows at once. */
.macro CALL_HELPER helper
	add	lr, sp, #8                      /* caller SP: before PROLOG */
	elt_arm_address r4, probe_caller_sp
	str	lr, [r4]
	ldr	ip, [sp, #4]                    /* our return address */
	elt_arm_address r4, probe_return_address
	str	ip, [r4]
	elt_arm_address r4, probe_function
	ldr	ip, [r4]
	push	{ip, lr}                        /* [sp] id, [sp, #4] caller SP */
	bl	\helper
.endm

	.text
ELT_ENTRY(probe_enter)
	PROLOG
	CALL_HELPER elt_helper_enter
	EPILOG
ELT_END(probe_enter)
	.globl	probe_enter_end
probe_enter_end:

ELT_ENTRY(probe_leave)
	PROLOG
	elt_arm_address ip, probe_target
	ldr	ip, [ip]
	blx	ip                      /* r0 (a result address) passes through */
	/* r2, the continuation return, for an async function only, as a JIT
	 * sets it: in another r2 may be part of the result (a vector in
	 * r0-r3).  probes-continuation.c looks the function up; the result
	 * registers are kept around the call. */
	push	{r0-r3}
	.cfi_adjust_cfa_offset 16
#if defined(__ARM_PCS_VFP)
	vpush	{d0-d7}
	.cfi_adjust_cfa_offset 64
#endif
	bl	probe_sets_continuation
	mov	ip, r0
#if defined(__ARM_PCS_VFP)
	vpop	{d0-d7}
	.cfi_adjust_cfa_offset -64
#endif
	pop	{r0-r3}
	.cfi_adjust_cfa_offset -16
	cmp	ip, #0
	beq	1f
	elt_arm_address r4, probe_continuation
	ldr	r2, [r4]
1:
	CALL_HELPER elt_helper_leave
	EPILOG
ELT_END(probe_leave)

ELT_ENTRY(probe_tailcall)
	PROLOG
	CALL_HELPER elt_helper_tailcall
	EPILOG
ELT_END(probe_tailcall)

/*
 * A JIT's tail call: Tailcall with the callee's arguments live (here the
 * probe's own: r0-r3, d0-d7 on hard-float) and lr still at [caller SP - 4]
 * (the library reads the return address there), then the frame taken down
 * (lr holds the return into our caller again) and a jump through
 * probe_target: the target returns to our caller itself.  Register
 * arguments only: stack arguments are not forwarded (the target has the
 * same prototype and would find the caller's where they are, but nothing
 * checks that).
 *
 * bx, not mov pc or b: the target may be in the other instruction set
 * (bit 0 of a Thumb function's address is set; bx switches state by it),
 * and lr keeps whatever state bit our caller's bl/blx gave it.  ip carries
 * no argument and the pop leaves it alone.
 */
ELT_ENTRY(probe_tailcall_jump)
	PROLOG
	CALL_HELPER elt_helper_tailcall
	elt_arm_address ip, probe_target
	ldr	ip, [ip]
	pop	{r4, lr}
	.cfi_adjust_cfa_offset -8
	.cfi_restore r4
	.cfi_restore lr
	bx	ip
ELT_END(probe_tailcall_jump)

ELT_ENTRY(probe_pair)
	PROLOG
	CALL_HELPER elt_helper_enter
	CALL_HELPER elt_helper_leave
	EPILOG
ELT_END(probe_pair)

ELT_ENTRY(probe_bare)
	bx	lr
ELT_END(probe_bare)

#include "../probes-data.h"

	ELT_OBJECT_NOTES
