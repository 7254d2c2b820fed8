/*
 * The three methods as a 32-bit ARM JIT would emit them (doc/abi.md):
 * Enter in the prolog with the arguments live, the body, then Leave with
 * either the continuation in r2 (suspension: r0/r1 hold no result) or the
 * result in r0:r1 (int64; a double on soft-float) or d0 (a double on
 * hard-float) and r2 = 0 (final return).
 *
 *   method(K continuation in r0, int32 n in r1)
 *
 * After Leave each method checks that r2 still holds the continuation:
 * a helper that clobbered it would make the runtime lose the method.
 */
#include "asm.h"

/* The bodies return a two-field struct of 16 bytes ({int64 or double,
 * continuation}, or the continuation alone for the void body).  AAPCS
 * returns a composite larger than a word in memory: the caller reserves
 * it and passes its address in r0, so the body's own arguments move to
 * r1, r2.  The continuation is the word at offset 8. */
#define RET_INT    0
#define RET_DOUBLE 1
#define RET_VOID   2
#define RESULT_VALUE 0
#define RESULT_CONTINUATION 8
#define RESULT_SIZE 16

/* push {r4, r5, r6, lr} (16) + the result buffer (16): the caller SP is
 * sp + 32 in the body. */
#define CALLER_SP_OFFSET 32

/* Push the function id and the caller SP and call a helper; ip and lr
 * are free here (lr is saved, ip is scratch at any call). */
.macro CALL_HELPER helper, id
	add	lr, sp, #CALLER_SP_OFFSET
	elt_arm_address ip, \id
	ldr	ip, [ip]
	push	{ip, lr}                        /* [sp] id, [sp, #4] caller SP */
	bl	\helper                         /* removes both */
.endm

	.text
.macro METHOD name, body, ret
ELT_ENTRY(\name)
	push	{r4, r5, r6, lr}                /* lr just below the caller SP */
	.save	{r4, r5, r6, lr}
	.cfi_adjust_cfa_offset 16
	.cfi_rel_offset r4, 0
	.cfi_rel_offset r5, 4
	.cfi_rel_offset r6, 8
	.cfi_rel_offset lr, 12
	sub	sp, sp, #RESULT_SIZE
	.pad	#RESULT_SIZE
	.cfi_adjust_cfa_offset RESULT_SIZE

	CALL_HELPER elt_helper_enter, \name\()_id
	.if \ret == RET_VOID
	bl	\body                           /* r0, r1 as Enter left them */
	mov	r2, r0
	.else
	mov	r2, r1                          /* n */
	mov	r1, r0                          /* K */
	mov	r0, sp                          /* the result */
	bl	\body
	ldr	r2, [sp, #RESULT_CONTINUATION]
	.if \ret == RET_INT
	ldr	r0, [sp, #RESULT_VALUE]
	ldr	r1, [sp, #RESULT_VALUE + 4]
	.else
#if defined(__ARM_PCS_VFP)
	vldr	d0, [sp, #RESULT_VALUE]
#else
	ldr	r0, [sp, #RESULT_VALUE]
	ldr	r1, [sp, #RESULT_VALUE + 4]
#endif
	.endif
	.endif
	cmp	r2, #0
	beq	1f
	ldr	r0, =0x5eed5eed                 /* a suspension has no result */
	mov	r1, r0
1:	mov	r4, r2

	CALL_HELPER elt_helper_leave, \name\()_id
	cmp	r2, r4
	beq	2f
	mov	r5, r0                          /* keep the result: the test reports */
	mov	r6, r1
	elt_arm_address r0, seed_continuation_clobbered
	mov	r1, #1
	bl	__sync_fetch_and_add_4
	mov	r0, r5
	mov	r1, r6
	mov	r2, r4
2:	add	sp, sp, #RESULT_SIZE
	pop	{r4, r5, r6, pc}
	.ltorg
ELT_END(\name)
.endm

	METHOD	seed_Work, seed_work_body, RET_INT
	METHOD	seed_WorkVoid, seed_work_void_body, RET_VOID
	METHOD	seed_WorkDouble, seed_work_double_body, RET_DOUBLE

/* The dispatcher's call into a method: C cannot read r2 after a call.
 *   void seed_invoke(method, continuation, n, struct outcome *out)
 * out: { int64 at 0, double at 8, continuation at 16 }. */
ELT_ENTRY(seed_invoke)
	push	{r4, lr}
	.save	{r4, lr}
	.cfi_adjust_cfa_offset 8
	.cfi_rel_offset r4, 0
	.cfi_rel_offset lr, 4
	mov	r4, r3
	mov	ip, r0
	mov	r0, r1
	mov	r1, r2
	blx	ip
	str	r0, [r4, #0]
	str	r1, [r4, #4]
#if defined(__ARM_PCS_VFP)
	vstr	d0, [r4, #8]
#else
	str	r0, [r4, #8]                    /* a double comes back in r0:r1 */
	str	r1, [r4, #12]
#endif
	str	r2, [r4, #16]
	pop	{r4, pc}
ELT_END(seed_invoke)

/* The function ids, as the runtime registers them: the methods' addresses
 * (with the Thumb bit, as C sees a function pointer), relocated by the
 * dynamic linker like any constant a JIT embeds. */
	.section .data.rel.ro, "aw"
	.p2align 2
seed_Work_id:		.word seed_Work
seed_WorkVoid_id:	.word seed_WorkVoid
seed_WorkDouble_id:	.word seed_WorkDouble

	ELT_OBJECT_NOTES
