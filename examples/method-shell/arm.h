/*
 * The method shell for 32-bit ARM, hard-float and soft-float (see
 * shell.h; the helper protocol is in doc/abi.md): K in r0, the arguments
 * in r1, r2; the continuation return register is r2.  A result is in
 * r0:r1 (int64; a double on soft-float) or d0 (a double on hard-float).
 * Include "asm.h" first.
 *
 * Body results: {int64 or double, continuation} is a 16-byte composite,
 * which the AAPCS returns in memory: the caller passes its address in r0
 * and the arguments move up one register.  A void body returns the
 * continuation in r0.
 */
#define SHELL_RESULT_VALUE 0
#define SHELL_RESULT_CONTINUATION 8
#define SHELL_RESULT_SIZE 16

/* push {r4, r5, r6, lr} (16) + the result buffer (16): the caller SP is
 * sp + 32 in the body. */
#define SHELL_CALLER_SP_OFFSET 32

/* Push the function id and the caller SP and call a helper; ip and lr
 * are free here (lr is saved, ip is scratch at any call). */
.macro SHELL_CALL_HELPER helper, id
	add	lr, sp, #SHELL_CALLER_SP_OFFSET
	elt_arm_address ip, \id
	ldr	ip, [ip]
	push	{ip, lr}                        /* [sp] id, [sp, #4] caller SP */
	bl	\helper                         /* removes both */
.endm

.macro SHELL_METHOD name, body, kind, clobbered
/* The function id, as the runtime registers it: the method's address
 * (with the Thumb bit, as C sees a function pointer), relocated by the
 * dynamic linker like any constant a JIT embeds. */
	.pushsection .data.rel.ro, "aw"
	.p2align 2
\name\()_id:
	.word	\name
	.popsection

ELT_ENTRY(\name)
	push	{r4, r5, r6, lr}                /* lr just below the caller SP */
	.save	{r4, r5, r6, lr}
	.cfi_adjust_cfa_offset 16
	.cfi_rel_offset r4, 0
	.cfi_rel_offset r5, 4
	.cfi_rel_offset r6, 8
	.cfi_rel_offset lr, 12
	sub	sp, sp, #SHELL_RESULT_SIZE
	.pad	#SHELL_RESULT_SIZE
	.cfi_adjust_cfa_offset SHELL_RESULT_SIZE

	SHELL_CALL_HELPER elt_helper_enter, \name\()_id
	.if \kind == SHELL_RET_VOID
	bl	\body                           /* the arguments as Enter left them */
	mov	r2, r0
	.else
	mov	r3, r2                          /* the arguments move up one */
	mov	r2, r1
	mov	r1, r0
	mov	r0, sp                          /* the result */
	bl	\body
	ldr	r2, [sp, #SHELL_RESULT_CONTINUATION]
	.if \kind == SHELL_RET_INT
	ldr	r0, [sp, #SHELL_RESULT_VALUE]
	ldr	r1, [sp, #SHELL_RESULT_VALUE + 4]
	.else
#if defined(__ARM_PCS_VFP)
	vldr	d0, [sp, #SHELL_RESULT_VALUE]
#else
	ldr	r0, [sp, #SHELL_RESULT_VALUE]
	ldr	r1, [sp, #SHELL_RESULT_VALUE + 4]
#endif
	.endif
	.endif
	cmp	r2, #0
	beq	1f
	ldr	r0, =0x5eed5eed                 /* a suspension has no result */
	mov	r1, r0
1:	mov	r4, r2

	SHELL_CALL_HELPER elt_helper_leave, \name\()_id
	cmp	r2, r4
	beq	2f
	mov	r5, r0                          /* keep the result: the runtime reports */
	mov	r6, r1
	elt_arm_address r0, \clobbered
	mov	r1, #1
	bl	__sync_fetch_and_add_4
	mov	r0, r5
	mov	r1, r6
	mov	r2, r4
2:	add	sp, sp, #SHELL_RESULT_SIZE
	pop	{r4, r5, r6, pc}
	.ltorg
ELT_END(\name)
.endm

/* void name(void (*method)(void) r0, struct shell_call *call r1) */
.macro SHELL_INVOKE name
ELT_ENTRY(\name)
	push	{r4, lr}
	.save	{r4, lr}
	.cfi_adjust_cfa_offset 8
	.cfi_rel_offset r4, 0
	.cfi_rel_offset lr, 4
	mov	r4, r1
	mov	ip, r0
	ldr	r0, [r4, #SHELL_CALL_CONTINUATION]      /* the low words */
	ldr	r1, [r4, #SHELL_CALL_ARGS]
	ldr	r2, [r4, #SHELL_CALL_ARGS + 8]
	blx	ip
	str	r0, [r4, #SHELL_CALL_INT_RESULT]
	str	r1, [r4, #SHELL_CALL_INT_RESULT + 4]
#if defined(__ARM_PCS_VFP)
	vstr	d0, [r4, #SHELL_CALL_DOUBLE_RESULT]
#else
	str	r0, [r4, #SHELL_CALL_DOUBLE_RESULT]     /* a double comes back in r0:r1 */
	str	r1, [r4, #SHELL_CALL_DOUBLE_RESULT + 4]
#endif
	str	r2, [r4, #SHELL_CALL_CONTINUATION_OUT]
	mov	r0, #0
	str	r0, [r4, #SHELL_CALL_CONTINUATION_OUT + 4]
	pop	{r4, pc}
ELT_END(\name)
.endm
