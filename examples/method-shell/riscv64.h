/*
 * The method shell for riscv64 LP64D (see shell.h; the helper protocol is
 * in doc/abi.md): K in a0, the arguments in a1, a2; the continuation
 * return register is a2.  Include "asm.h" first.
 *
 * The method keeps the standard frame record (s0 = caller SP, ra at
 * s0 - 8), where the library reads the return address.  Body results
 * (GCC, LP64D): {int64, continuation} comes back in a0:a1, {double,
 * continuation} in a0:a1 too (the double's bits in a0: a pointer is no
 * "integer" for the floating-point-and-integer struct rule), a void
 * body's continuation in a0.
 */

/* The helpers' 16 bytes: the function id at 0(sp), the caller SP at 8. */
.macro SHELL_HELPER_ARGS name
	addi	sp, sp, -16
	lla	t0, \name
	sd	t0, 0(sp)
	sd	s0, 8(sp)
.endm

.macro SHELL_METHOD name, body, kind, clobbered
ELT_ENTRY(\name)
	addi	sp, sp, -32
	.cfi_def_cfa_offset 32
	sd	ra, 24(sp)
	.cfi_rel_offset ra, 24
	sd	s0, 16(sp)
	.cfi_rel_offset s0, 16
	sd	s1, 8(sp)
	.cfi_rel_offset s1, 8
	addi	s0, sp, 32
	.cfi_def_cfa s0, 0

	SHELL_HELPER_ARGS \name
	call	elt_helper_enter@plt    /* frees the 16 bytes */
	call	\body                   /* the arguments as Enter left them */

	.if \kind == SHELL_RET_VOID
	mv	a2, a0
	.else
	mv	a2, a1
	.endif
	.if \kind == SHELL_RET_DOUBLE
	fmv.d.x	fa0, a0
	.endif
	beqz	a2, 1f
	li	a0, 0x5eed5eed5eed5eed  /* a suspension has no result */
	fmv.d.x	fa0, a0
1:	mv	s1, a2
	SHELL_HELPER_ARGS \name
	call	elt_helper_leave@plt
	beq	a2, s1, 2f
	la	t0, \clobbered
	li	t1, 1
	amoadd.d zero, t1, (t0)
	mv	a2, s1                  /* keep running: the runtime reports it */
2:	.cfi_def_cfa sp, 32             /* sp = s0 - 32: the helpers freed their bytes */
	ld	ra, 24(sp)
	.cfi_restore ra
	ld	s1, 8(sp)
	.cfi_restore s1
	ld	s0, 16(sp)
	.cfi_restore s0
	addi	sp, sp, 32
	.cfi_def_cfa_offset 0
	ret
ELT_END(\name)
.endm

/* void name(void (*method)(void) a0, struct shell_call *call a1) */
.macro SHELL_INVOKE name
ELT_ENTRY(\name)
	addi	sp, sp, -16
	.cfi_def_cfa_offset 16
	sd	ra, 8(sp)
	.cfi_rel_offset ra, 8
	sd	s1, 0(sp)
	.cfi_rel_offset s1, 0
	mv	s1, a1
	mv	t0, a0
	ld	a0, SHELL_CALL_CONTINUATION(s1)
	ld	a1, SHELL_CALL_ARGS(s1)
	ld	a2, SHELL_CALL_ARGS + 8(s1)
	jalr	t0
	sd	a0, SHELL_CALL_INT_RESULT(s1)
	fsd	fa0, SHELL_CALL_DOUBLE_RESULT(s1)
	sd	a2, SHELL_CALL_CONTINUATION_OUT(s1)
	ld	ra, 8(sp)
	.cfi_restore ra
	ld	s1, 0(sp)
	.cfi_restore s1
	addi	sp, sp, 16
	.cfi_def_cfa_offset 0
	ret
ELT_END(\name)
.endm
