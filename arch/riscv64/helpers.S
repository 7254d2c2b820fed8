/*
 * riscv64 LP64D helpers: elt_helper_enter, elt_helper_leave and
 * elt_helper_tailcall, called by instrumented code (doc/abi.md).
 *
 *   in:  ra: the return into the instrumented code (call / jal ra).
 *        0(sp): the function id, 8(sp): the caller SP (the SP before the
 *        call to the instrumented function: its first stack argument),
 *        16 bytes the caller reserved just before the call.  The helper
 *        frees them: it returns with sp 16 higher than at the call.
 *   out: a0-a7, t0-t6, s0-s11, ra, gp, tp unchanged; fa0-fa7 and fs0-fs11
 *        unchanged at their full 64 bits; fcsr (rounding mode and accrued
 *        flags) unchanged.  Only ft0-ft11 and the vector registers (never
 *        an argument or result in the LP64D convention) may change.
 *
 * The helper keeps a standard frame record (s0 = its CFA, ra at s0-8, the
 * old s0 at s0-16) and aligns its own frame, so a caller whose sp is only
 * 8-byte aligned works too.  CFI describes every instruction.
 */
#include "asm.h"
#include "frame.h"
#include "hook.h"

	.text

.macro HELPER name, hook
ELT_ENTRY(\name)
	/* Idle (no plugin, or stopped): free the caller's 16 bytes and
	 * return.  No integer register is free, so t0 waits in ft0, which
	 * may change (LP64D guarantees the D extension). */
	fmv.d.x	ft0, t0
	.cfi_register t0, ft0
.Larmed_address\@:
	auipc	t0, %pcrel_hi(elt_armed)
	lbu	t0, %pcrel_lo(.Larmed_address\@)(t0)
	bnez	t0, .Larmed\@
	fmv.x.d	t0, ft0
	.cfi_remember_state
	.cfi_restore t0
	addi	sp, sp, 16
	.cfi_def_cfa_offset -16
	ret
	.cfi_restore_state
.Larmed\@:
	fmv.x.d	t0, ft0
	.cfi_restore t0
	addi	sp, sp, -16
	.cfi_def_cfa_offset 16
	sd	ra, 8(sp)
	.cfi_rel_offset ra, 8
	sd	s0, 0(sp)
	.cfi_rel_offset s0, 0
	addi	s0, sp, 16              /* the CFA: the id and caller SP are at 0(s0) */
	.cfi_def_cfa s0, 0
	addi	sp, sp, -ELT_RISCV64_FRAME_SIZE
	andi	sp, sp, -16

	.irp	n, 0, 1, 2, 3, 4, 5, 6, 7
	sd	a\n, ELT_RISCV64_A0 + \n * 8(sp)
	.endr
	.irp	n, 0, 1, 2, 3, 4, 5, 6
	sd	t\n, ELT_RISCV64_T0 + \n * 8(sp)
	.endr
	.irp	n, 0, 1, 2, 3, 4, 5, 6, 7
	fsd	fa\n, ELT_RISCV64_FA0 + \n * 8(sp)
	.endr
	frcsr	t0
	sw	t0, ELT_RISCV64_FCSR(sp)
	ld	t0, 0(s0)
	sd	t0, ELT_RISCV64_FUNCTION_ID(sp)
	ld	t0, 8(s0)
	sd	t0, ELT_RISCV64_CALLER_SP(sp)
	li	t0, \hook
	sw	t0, ELT_RISCV64_HOOK(sp)

	mv	a0, sp
	call	elt_riscv64_dispatch

	lw	t0, ELT_RISCV64_FCSR(sp)
	fscsr	t0
	.irp	n, 0, 1, 2, 3, 4, 5, 6, 7
	fld	fa\n, ELT_RISCV64_FA0 + \n * 8(sp)
	.endr
	.irp	n, 0, 1, 2, 3, 4, 5, 6, 7
	ld	a\n, ELT_RISCV64_A0 + \n * 8(sp)
	.endr
	.irp	n, 0, 1, 2, 3, 4, 5, 6
	ld	t\n, ELT_RISCV64_T0 + \n * 8(sp)
	.endr

	addi	sp, s0, -16
	.cfi_def_cfa sp, 16
	ld	ra, 8(sp)
	.cfi_restore ra
	ld	s0, 0(sp)
	.cfi_restore s0
	addi	sp, sp, 32              /* the frame record and the caller's 16 bytes */
	.cfi_def_cfa_offset -16
	ret
ELT_END(\name)
.endm

	ELT_LOCAL(elt_armed)
	ELT_LOCAL(elt_riscv64_dispatch)

	HELPER	elt_helper_enter, ELT_HOOK_ENTER
	HELPER	elt_helper_leave, ELT_HOOK_LEAVE
	HELPER	elt_helper_tailcall, ELT_HOOK_TAILCALL

	ELT_OBJECT_NOTES
