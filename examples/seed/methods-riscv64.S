/*
 * The three methods as a riscv64 LP64D JIT would emit them (doc/abi.md):
 * Enter in the prolog with the arguments live, the body, then Leave with
 * either the continuation in a2 (suspension: a0 holds no result) or the
 * result in a0 / fa0 and a2 = 0 (final return).
 *
 *   method(K continuation in a0, int32 n in a1)
 *
 * Every method keeps the standard frame record (s0 = caller SP, ra at
 * s0-8), which is where the library reads the return address.  After Leave
 * each method checks that a2 still holds the continuation: a helper that
 * clobbered it would make the runtime lose the method.
 */
#include "asm.h"

/* Body results (GCC, LP64D): struct { int64_t; void * } comes back in
 * a0:a1; struct { double; void * } in a0:a1 too (the double's bits in a0:
 * a pointer is not an "integer" for the FP + integer struct rule), and a
 * void body's continuation in a0. */
#define RET_INT    0
#define RET_DOUBLE 1
#define RET_VOID   2

	.text
.macro HELPER_ARGS name
	addi	sp, sp, -16
	lla	t0, \name               /* the function id */
	sd	t0, 0(sp)
	sd	s0, 8(sp)               /* the caller SP */
.endm

.macro METHOD name, body, ret
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

	HELPER_ARGS \name
	call	elt_helper_enter@plt    /* frees the 16 bytes */
	call	\body                   /* a0, a1 as Enter left them */

	.if \ret == RET_VOID
	mv	a2, a0
	.else
	mv	a2, a1
	.endif
	.if \ret == RET_DOUBLE
	fmv.d.x	fa0, a0
	.endif
	beqz	a2, 1f
	li	a0, 0x5eed5eed5eed5eed  /* a suspension has no result */
	fmv.d.x	fa0, a0
1:	mv	s1, a2
	HELPER_ARGS \name
	call	elt_helper_leave@plt
	beq	a2, s1, 2f
	la	t0, seed_continuation_clobbered
	li	t1, 1
	amoadd.d zero, t1, (t0)
	mv	a2, s1                  /* keep running: the test reports it */
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

	METHOD	seed_Work, seed_work_body, RET_INT
	METHOD	seed_WorkVoid, seed_work_void_body, RET_VOID
	METHOD	seed_WorkDouble, seed_work_double_body, RET_DOUBLE

/* The dispatcher's call into a method: C cannot read a2 after a call.
 *   void seed_invoke(method, continuation, n, struct outcome *out) */
ELT_ENTRY(seed_invoke)
	addi	sp, sp, -16
	.cfi_def_cfa_offset 16
	sd	ra, 8(sp)
	.cfi_rel_offset ra, 8
	sd	s1, 0(sp)
	.cfi_rel_offset s1, 0
	mv	s1, a3
	mv	t0, a0
	mv	a0, a1
	mv	a1, a2
	jalr	t0
	sd	a0, 0(s1)
	fsd	fa0, 8(s1)
	sd	a2, 16(s1)
	ld	ra, 8(sp)
	.cfi_restore ra
	ld	s1, 0(sp)
	.cfi_restore s1
	addi	sp, sp, 16
	.cfi_def_cfa_offset 0
	ret
ELT_END(seed_invoke)

	ELT_OBJECT_NOTES
