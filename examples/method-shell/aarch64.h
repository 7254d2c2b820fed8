/*
 * The method shell for AArch64 (AAPCS64, Linux; see shell.h; the helper
 * protocol is in doc/abi.md): K in x0, the arguments in x1, x2; the
 * continuation return register is x2.  Include "asm.h" first.
 *
 * Body results (a 16-byte struct that is no floating-point aggregate
 * comes back in x0, x1, its bytes as in memory): {int64, continuation}
 * and {double, continuation} in x0:x1 (the double's bits in x0), a void
 * body's continuation in x0.
 */

#define SHELL_FRAME 32          /* frame record, x19, padding */

/* The method keeps a frame record at x29 during both helper calls: the
 * library reads the return address from it. */
.macro SHELL_METHOD name, body, kind, clobbered
ELT_ENTRY(\name)
	ELT_SIGN_LR
	stp	x29, x30, [sp, #-SHELL_FRAME]!
	.cfi_def_cfa_offset SHELL_FRAME
	.cfi_offset x29, -SHELL_FRAME
	.cfi_offset x30, -SHELL_FRAME + 8
	mov	x29, sp
	.cfi_def_cfa_register x29
	str	x19, [sp, #16]
	.cfi_offset x19, -SHELL_FRAME + 16

	add	x9, x29, #SHELL_FRAME   /* caller SP */
	adr	x10, \name              /* function id */
	stp	x10, x9, [sp, #-16]!
	bl	elt_helper_enter        /* releases both words */
	bl	\body                   /* the arguments as Enter left them */

	.if \kind == SHELL_RET_VOID
	mov	x2, x0
	.else
	mov	x2, x1
	.endif
	.if \kind == SHELL_RET_DOUBLE
	fmov	d0, x0
	.endif
	cbz	x2, 1f
	movz	x0, #0x5eed             /* a suspension has no result */
	movk	x0, #0x5eed, lsl #16
	movk	x0, #0x5eed, lsl #32
	movk	x0, #0x5eed, lsl #48
1:	mov	x19, x2
	add	x9, x29, #SHELL_FRAME
	adr	x10, \name
	stp	x10, x9, [sp, #-16]!
	bl	elt_helper_leave
	cmp	x2, x19
	b.eq	3f
	adrp	x9, \clobbered
	add	x9, x9, :lo12:\clobbered
2:	ldxr	x10, [x9]
	add	x10, x10, #1
	stxr	w11, x10, [x9]
	cbnz	w11, 2b
	mov	x2, x19                 /* keep running: the runtime reports it */
3:	ldr	x19, [sp, #16]
	ldp	x29, x30, [sp], #SHELL_FRAME
	.cfi_def_cfa sp, 0
	.cfi_restore x19
	.cfi_restore x29
	.cfi_restore x30
	ELT_AUTH_LR
	ret
ELT_END(\name)
.endm

/* void name(void (*method)(void) x0, struct shell_call *call x1) */
.macro SHELL_INVOKE name
ELT_ENTRY(\name)
	ELT_SIGN_LR
	stp	x29, x30, [sp, #-32]!
	.cfi_def_cfa_offset 32
	.cfi_offset x29, -32
	.cfi_offset x30, -24
	mov	x29, sp
	str	x19, [sp, #16]
	.cfi_offset x19, -16
	mov	x19, x1
	mov	x16, x0                 /* blr x16: a BTI "c" landing pad accepts it */
	ldr	x0, [x19, #SHELL_CALL_CONTINUATION]
	ldr	x1, [x19, #SHELL_CALL_ARGS]
	ldr	x2, [x19, #SHELL_CALL_ARGS + 8]
	blr	x16
	str	x0, [x19, #SHELL_CALL_INT_RESULT]
	str	d0, [x19, #SHELL_CALL_DOUBLE_RESULT]
	str	x2, [x19, #SHELL_CALL_CONTINUATION_OUT]
	ldr	x19, [sp, #16]
	ldp	x29, x30, [sp], #32
	.cfi_def_cfa_offset 0
	.cfi_restore x19
	.cfi_restore x29
	.cfi_restore x30
	ELT_AUTH_LR
	ret
ELT_END(\name)
.endm
