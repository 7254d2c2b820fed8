/*
 * s390x helpers: elt_helper_enter, elt_helper_leave and
 * elt_helper_tailcall, called by instrumented code (doc/abi.md).
 *
 *   in:  at 160(%r15) the function id and at 168(%r15) the caller SP (the
 *        %r15 the instrumented function was entered with), stored by the
 *        caller in its own frame; called with brasl %r14 (or basr).
 *   out: every general register unchanged (%r14 holds the return point,
 *        as after any call, %r15 is unchanged), f0-f7 unchanged and, with
 *        the vector facility, v0-v7 and v24-v31 at their full 128 bits;
 *        the FPC restored whole.  Only the condition code and the
 *        registers that carry nothing here may change: v16-v23 and the
 *        rightmost halves of v8-v15 (f8-f15 themselves are callee-saved,
 *        so the C code keeps them).
 *
 * The helper saves %r14/%r15 in the save area its caller provided, as
 * every s390x function does, and describes that with CFI so debuggers
 * and backtrace() unwind through it.
 */
#include "asm.h"
#include "frame.h"
#include "hook.h"

#define IMG(field) (ELT_S390X_IMAGE + ELT_S390X_##field)

	.text

/* Branches to \novx when this CPU or kernel has no vector registers. */
.macro IF_VECTOR novx
	larl	%r1, elt_s390x_vector
	lt	%r1, 0(%r1)
	je	\novx
.endm

.macro HELPER name, hook
ELT_ENTRY(\name)
	/* Idle (no plugin, or stopped): return at once.  %r1 is borrowed
	 * for the address and kept meanwhile in the save area our caller
	 * provides; lg leaves the condition code from cli intact.  GCC
	 * aligns every global to 2 bytes on this target, as larl needs. */
	stg	%r1, ELT_S390X_SAVE_R2(%r15)
	larl	%r1, elt_armed
	cli	0(%r1), 0
	lg	%r1, ELT_S390X_SAVE_R2(%r15)
	jne	.Larmed\@
	br	%r14
.Larmed\@:
	stmg	%r14, %r15, ELT_S390X_SAVE_R14(%r15)
	.cfi_offset %r14, ELT_S390X_SAVE_R14 - ELT_S390X_SAVE_AREA
	.cfi_offset %r15, ELT_S390X_SAVE_R14 + 8 - ELT_S390X_SAVE_AREA
	lay	%r15, -ELT_S390X_HELPER_FRAME(%r15)
	.cfi_adjust_cfa_offset ELT_S390X_HELPER_FRAME

	stmg	%r0, %r15, IMG(GPR)(%r15)
	la	%r1, ELT_S390X_HELPER_FRAME(%r15)       /* %r15 at entry */
	stg	%r1, IMG(GPR) + 15 * 8(%r15)
	stg	%r1, 0(%r15)                            /* back chain, for free */
	mvc	IMG(FUNCTION_ID)(8, %r15), ELT_S390X_HELPER_FRAME + ELT_S390X_IN_ID(%r15)
	mvc	IMG(CALLER_SP)(8, %r15), ELT_S390X_HELPER_FRAME + ELT_S390X_IN_CALLER_SP(%r15)
	mvhi	IMG(HOOK)(%r15), \hook
	stfpc	IMG(FPC)(%r15)

	IF_VECTOR .Lsave_fpr\@
	.machine push
	.machine "z13"
	vstm	%v0, %v7, IMG(VEC)(%r15)
	vstm	%v24, %v31, IMG(VEC_HIGH)(%r15)
	.machine pop
	j	.Lsaved\@
.Lsave_fpr\@:
	.irp	n, 0, 1, 2, 3, 4, 5, 6, 7
	std	%f\n, IMG(VEC) + \n * ELT_S390X_VEC_SLOT(%r15)
	.endr
.Lsaved\@:

	la	%r2, ELT_S390X_IMAGE(%r15)
	brasl	%r14, elt_s390x_dispatch

	IF_VECTOR .Lrestore_fpr\@
	.machine push
	.machine "z13"
	vlm	%v0, %v7, IMG(VEC)(%r15)
	vlm	%v24, %v31, IMG(VEC_HIGH)(%r15)
	.machine pop
	j	.Lrestored\@
.Lrestore_fpr\@:
	.irp	n, 0, 1, 2, 3, 4, 5, 6, 7
	ld	%f\n, IMG(VEC) + \n * ELT_S390X_VEC_SLOT(%r15)
	.endr
.Lrestored\@:
	lfpc	IMG(FPC)(%r15)
	lmg	%r0, %r15, IMG(GPR)(%r15)               /* %r15 last: back at entry */
	.cfi_restore %r14
	.cfi_restore %r15
	.cfi_def_cfa_offset ELT_S390X_SAVE_AREA
	br	%r14
ELT_END(\name)
.endm

	ELT_LOCAL(elt_armed)
	ELT_LOCAL(elt_s390x_dispatch)
	ELT_LOCAL(elt_s390x_vector)

	HELPER	elt_helper_enter, ELT_HOOK_ENTER
	HELPER	elt_helper_leave, ELT_HOOK_LEAVE
	HELPER	elt_helper_tailcall, ELT_HOOK_TAILCALL

	ELT_OBJECT_NOTES
