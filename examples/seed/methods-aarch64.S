/*
 * The three methods as an AArch64 JIT would emit them (doc/abi.md):
 * Enter in the prolog with the arguments live, the body, then Leave with
 * either the continuation in x2 (suspension: x0 holds no result) or the
 * result in x0 / d0 and x2 = 0 (final return).
 *
 *   method(K continuation in x0, int32 n in w1)
 *
 * After Leave each method checks that x2 still holds the continuation:
 * a helper that clobbered it would make the runtime lose the method.
 */
#include "asm.h"

/* Body results (AAPCS64: a 16-byte struct that is no floating-point
 * aggregate comes back in x0, x1, its bytes as in memory): int bodies
 * return {value, continuation} in x0:x1, double bodies {value,
 * continuation} in x0:x1 as well (the double's bits in x0), void bodies
 * the continuation in x0. */
#define RET_INT    0
#define RET_DOUBLE 1
#define RET_VOID   2

#define FRAME 32                /* frame record, x19, padding */

	.text
.macro METHOD name, body, ret
ELT_ENTRY(\name)
	ELT_SIGN_LR
	stp	x29, x30, [sp, #-FRAME]!
	.cfi_def_cfa_offset FRAME
	.cfi_offset x29, -FRAME
	.cfi_offset x30, -FRAME + 8
	mov	x29, sp                 /* x29: our frame record, as the helpers want */
	.cfi_def_cfa_register x29
	str	x19, [sp, #16]
	.cfi_offset x19, -FRAME + 16

	add	x9, x29, #FRAME         /* caller SP */
	adr	x10, \name              /* function id */
	stp	x10, x9, [sp, #-16]!
	bl	elt_helper_enter        /* releases both words */
	bl	\body                   /* uses x0, w1 as Enter left them */

	.if \ret == RET_INT
	mov	x2, x1
	.elseif \ret == RET_DOUBLE
	mov	x2, x1
	fmov	d0, x0
	.else
	mov	x2, x0
	.endif
	cbz	x2, 1f
	movz	x0, #0x5eed             /* a suspension has no result */
	movk	x0, #0x5eed, lsl #16
	movk	x0, #0x5eed, lsl #32
	movk	x0, #0x5eed, lsl #48
1:	mov	x19, x2
	add	x9, x29, #FRAME
	adr	x10, \name
	stp	x10, x9, [sp, #-16]!
	bl	elt_helper_leave
	cmp	x2, x19
	b.eq	3f
	adrp	x9, seed_continuation_clobbered
	add	x9, x9, :lo12:seed_continuation_clobbered
2:	ldxr	x10, [x9]
	add	x10, x10, #1
	stxr	w11, x10, [x9]
	cbnz	w11, 2b
	mov	x2, x19                 /* keep running: the test reports it */
3:	ldr	x19, [sp, #16]
	ldp	x29, x30, [sp], #FRAME
	.cfi_def_cfa sp, 0
	.cfi_restore x19
	.cfi_restore x29
	.cfi_restore x30
	ELT_AUTH_LR
	ret
ELT_END(\name)
.endm

	METHOD	seed_Work, seed_work_body, RET_INT
	METHOD	seed_WorkVoid, seed_work_void_body, RET_VOID
	METHOD	seed_WorkDouble, seed_work_double_body, RET_DOUBLE

/* The dispatcher's call into a method: C cannot read x2 after a call.
 *   void seed_invoke(method, continuation, n, struct outcome *out) */
ELT_ENTRY(seed_invoke)
	ELT_SIGN_LR
	stp	x29, x30, [sp, #-32]!
	.cfi_def_cfa_offset 32
	.cfi_offset x29, -32
	.cfi_offset x30, -24
	mov	x29, sp
	str	x19, [sp, #16]
	.cfi_offset x19, -16
	mov	x19, x3
	mov	x16, x0
	mov	x0, x1
	mov	w1, w2
	blr	x16
	str	x0, [x19, #0]
	str	d0, [x19, #8]
	str	x2, [x19, #16]
	ldr	x19, [sp, #16]
	ldp	x29, x30, [sp], #32
	.cfi_def_cfa_offset 0
	.cfi_restore x19
	.cfi_restore x29
	.cfi_restore x30
	ELT_AUTH_LR
	ret
ELT_END(seed_invoke)

	ELT_OBJECT_NOTES
