/*
 * 32-bit ARM probes (tests/probes.h): instrumented functions that call
 * the helpers exactly as doc/abi.md tells a JIT to.  The arguments the C
 * caller placed (r0-r3, d0-d7 on hard-float, the stack) stay live; only
 * r4 (saved), ip and lr are used as scratch.
 */
#include "asm.h"
#include "../../probes.h"
#include "../lean-pair.h"

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

/* As a JIT emits it: the id an immediate (movw from ARMv6T2, two
 * instructions before it), nothing stored but the two words. */
.macro LEAN_CALL helper
	add	lr, sp, #8
#if __ARM_ARCH >= 7 || defined(__ARM_ARCH_6T2__)
	movw	ip, #PROBE_LEAN_ID
#else
	mov	ip, #(PROBE_LEAN_ID & 0xff00)
	orr	ip, ip, #(PROBE_LEAN_ID & 0xff)
#endif
	push	{ip, lr}
	bl	\helper
.endm

ELT_ENTRY(probe_lean_pair)
	LEAN_PAIR
ELT_END(probe_lean_pair)

/*
 * An idle hook loads the byte's address and the byte, and branches.  The
 * address comes pc-relatively as elt_arm_address gives it, but with the
 * literal after the return (ARMED_OFFSET), as the helpers keep theirs: no
 * branch over it on the idle path.  In ARM state the load itself adds
 * pc; Thumb-2 has no such form, but its cbz tests and branches at once.
 */
.macro GUARDED_CALL helper
	ldr	r4, .Larmed_offset_\helper
.Larmed_pc_\helper:
#if defined(__thumb2__)
	add	r4, pc
	ldr	r4, [r4]
	ldrb	r4, [r4]
	cbz	r4, .Lskip\@
#else
	ldr	r4, [pc, r4]
	ldrb	r4, [r4]
	cmp	r4, #0
	beq	.Lskip\@
#endif
	LEAN_CALL \helper
.Lskip\@:
.endm

.macro ARMED_OFFSET helper
	.p2align 2
.Larmed_offset_\helper:
	.word	probe_armed - (.Larmed_pc_\helper + ELT_ARM_PC_BIAS)
.endm

ELT_ENTRY(probe_guarded_pair)
	PROLOG
	GUARDED_CALL elt_helper_enter
	GUARDED_CALL elt_helper_leave
	EPILOG
	ARMED_OFFSET elt_helper_enter
	ARMED_OFFSET elt_helper_leave
ELT_END(probe_guarded_pair)

/* One test at the entry for both hooks: idle, the function is a bare
 * return after the test; armed, the lean pair.  Before the frame, so in
 * ip (free at a call); Thumb-2's cbz takes only r0-r7. */
ELT_ENTRY(probe_guarded_once)
	ldr	ip, .Lonce_offset
.Lonce_pc:
#if defined(__thumb2__)
	add	ip, pc
	ldr	ip, [ip]
#else
	ldr	ip, [pc, ip]
#endif
	ldrb	ip, [ip]
	cmp	ip, #0
	bne	.Lonce_armed
	bx	lr
.Lonce_armed:
	LEAN_PAIR
	.p2align 2
.Lonce_offset:
	.word	probe_armed - (.Lonce_pc + ELT_ARM_PC_BIAS)
ELT_END(probe_guarded_once)

ELT_ENTRY(probe_bare)
	bx	lr
ELT_END(probe_bare)

#include "../probes-data.h"

	ELT_OBJECT_NOTES
