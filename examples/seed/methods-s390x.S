/*
 * The three methods as an s390x JIT would emit them (doc/abi.md): Enter
 * in the prolog with the arguments live, the body, then Leave with
 * either the continuation in %r4 (suspension: %r2 holds no result) or
 * the result in %r2 / %f0 and %r4 = 0 (final return).
 *
 *   method(K continuation in %r2, int32 n in %r3)
 *
 * After Leave each method checks that %r4 still holds the continuation:
 * a helper that clobbered it would make the runtime lose the method.
 */
#include "asm.h"

/* Body results.  struct { int64_t; void * } and struct { double; void * }
 * are 16 bytes: on s390x they come back in memory, through a buffer
 * whose address the caller passes in %r2 (the body's own arguments then
 * move to %r3, %r4).  A void body returns the continuation in %r2. */
#define RET_INT    0
#define RET_DOUBLE 1
#define RET_VOID   2

/* The method's frame: the save area its callees may use, the helpers'
 * two inputs, then the body's result buffer. */
#define HELPER_ID   160
#define HELPER_SP   168
#define RESULT      176
#define FRAME       192

	.text
.macro HELPER_ARGS name
	larl	%r1, \name              /* function id: the method's address */
	stg	%r1, HELPER_ID(%r15)
	la	%r1, FRAME(%r15)        /* caller SP: %r15 at our entry */
	stg	%r1, HELPER_SP(%r15)
.endm

.macro METHOD name, body, ret
ELT_ENTRY(\name)
	stmg	%r6, %r15, 48(%r15)     /* %r14 lands at 112: the return address */
	.cfi_offset %r6, -112
	.cfi_offset %r7, -104
	.cfi_offset %r8, -96
	.cfi_offset %r9, -88
	.cfi_offset %r10, -80
	.cfi_offset %r11, -72
	.cfi_offset %r12, -64
	.cfi_offset %r13, -56
	.cfi_offset %r14, -48
	.cfi_offset %r15, -40
	lay	%r15, -FRAME(%r15)
	.cfi_adjust_cfa_offset FRAME

	HELPER_ARGS \name
	brasl	%r14, elt_helper_enter@PLT      /* %r2, %r3 intact */

	.if \ret == RET_VOID
	brasl	%r14, \body@PLT
	lgr	%r4, %r2
	.else
	lgfr	%r4, %r3                /* n */
	lgr	%r3, %r2                /* k */
	la	%r2, RESULT(%r15)
	brasl	%r14, \body@PLT
	lg	%r4, RESULT + 8(%r15)
	.if \ret == RET_INT
	lg	%r2, RESULT(%r15)
	.else
	ld	%f0, RESULT(%r15)
	.endif
	.endif
	ltgr	%r4, %r4
	jz	1f
	llihf	%r2, 0x5eed5eed         /* a suspension has no result */
	oilf	%r2, 0x5eed5eed
1:	lgr	%r7, %r4
	HELPER_ARGS \name
	brasl	%r14, elt_helper_leave@PLT
	cgr	%r4, %r7
	je	2f
	larl	%r1, seed_continuation_clobbered
	lghi	%r0, 1
	laag	%r0, %r0, 0(%r1)        /* atomic add */
	lgr	%r4, %r7                /* keep running: the test reports it */
2:	lmg	%r6, %r15, FRAME + 48(%r15)
	.cfi_restore %r6
	.cfi_restore %r7
	.cfi_restore %r8
	.cfi_restore %r9
	.cfi_restore %r10
	.cfi_restore %r11
	.cfi_restore %r12
	.cfi_restore %r13
	.cfi_restore %r14
	.cfi_restore %r15
	.cfi_def_cfa_offset 160
	br	%r14
ELT_END(\name)
.endm

	METHOD	seed_Work, seed_work_body, RET_INT
	METHOD	seed_WorkVoid, seed_work_void_body, RET_VOID
	METHOD	seed_WorkDouble, seed_work_double_body, RET_DOUBLE

/* The dispatcher's call into a method: C cannot read %r4 after a call.
 *   void seed_invoke(method, continuation, n, struct seed_outcome *out) */
ELT_ENTRY(seed_invoke)
	stmg	%r11, %r15, 88(%r15)
	.cfi_offset %r11, -72
	.cfi_offset %r12, -64
	.cfi_offset %r13, -56
	.cfi_offset %r14, -48
	.cfi_offset %r15, -40
	lay	%r15, -160(%r15)
	.cfi_adjust_cfa_offset 160
	lgr	%r11, %r5
	lgr	%r1, %r2
	lgr	%r2, %r3
	lgfr	%r3, %r4
	basr	%r14, %r1
	stg	%r2, 0(%r11)
	std	%f0, 8(%r11)
	stg	%r4, 16(%r11)
	lmg	%r11, %r15, 160 + 88(%r15)
	.cfi_restore %r11
	.cfi_restore %r12
	.cfi_restore %r13
	.cfi_restore %r14
	.cfi_restore %r15
	.cfi_def_cfa_offset 160
	br	%r14
ELT_END(seed_invoke)

	ELT_OBJECT_NOTES
