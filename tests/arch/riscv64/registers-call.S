/*
 * riscv64: call a helper with every register set from a struct regs and
 * capture every register after it.  Single-threaded.
 *
 * All of x5-x31 and f0-f31 carry canaries at the call, so nothing can hold
 * a pointer: the helper's address goes in ra itself (jalr ra, 0(ra)), and
 * after the call t0 is parked in this function's frame through sp (checked
 * against regs_sp_at_call afterwards) before the out pointer is loaded.
 * gp and tp are left as they are: C code relies on them.  The CFI below is
 * exact only until the canaries are loaded; nothing unwinds through here.
 */
#include "asm.h"
#include "registers-riscv64.h"

#define FRAME 224               /* 0: t0 parking slot; 16: fcsr; 24: fs0-11;
                                   120: s0-s11; 216: ra */

	.bss
	.p2align 3
saved_sp:	.dword 0
out_ptr:	.dword 0
helper_ptr:	.dword 0

	.text
/* void regs_call(void (*helper)(void), const struct regs *in,
 *                struct regs *out) */
ELT_ENTRY(regs_call)
	addi	sp, sp, -FRAME
	.cfi_def_cfa_offset FRAME
	sd	ra, 216(sp)
	.cfi_rel_offset ra, 216
	.irp	n, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11
	sd	s\n, 120 + \n * 8(sp)
	.cfi_rel_offset s\n, 120 + \n * 8
	fsd	fs\n, 24 + \n * 8(sp)
	.cfi_rel_offset fs\n, 24 + \n * 8
	.endr
	frcsr	t1
	sd	t1, 16(sp)
	sd	a0, helper_ptr, t0
	sd	a2, out_ptr, t0
	sd	sp, saved_sp, t0
	lw	t1, REGS_MISALIGN(a1)
	beqz	t1, 1f
	addi	sp, sp, -8              /* the helper must cope with this */
1:	sd	sp, regs_sp_at_call, t0
	ld	t1, REGS_FUNCTION_ID(a1)
	ld	t2, REGS_CALLER_SP(a1)
	addi	sp, sp, -16
	sd	t1, 0(sp)
	sd	t2, 8(sp)

	lw	t1, REGS_FCSR(a1)
	fscsr	t1
	.irp	n, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31
	fld	f\n, REGS_F + \n * 8(a1)
	.endr
	ld	ra, helper_ptr
	.irp	n, 5, 6, 7, 8, 9, 10, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31
	ld	x\n, REGS_X + \n * 8(a1)
	.endr
	ld	a1, REGS_X + 11 * 8(a1)
	jalr	ra, 0(ra)
	.globl	regs_after_call
regs_after_call:

	sd	t0, 0(sp)
	ld	t0, out_ptr
	.irp	n, 1, 2, 3, 4, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31
	sd	x\n, REGS_X + \n * 8(t0)
	.endr
	ld	t1, 0(sp)
	sd	t1, REGS_X + 5 * 8(t0)
	.irp	n, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31
	fsd	f\n, REGS_F + \n * 8(t0)
	.endr
	frcsr	t1
	sw	t1, REGS_FCSR(t0)

	ld	sp, saved_sp
	ld	t1, 16(sp)
	fscsr	t1
	.irp	n, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11
	ld	s\n, 120 + \n * 8(sp)
	.cfi_restore s\n
	fld	fs\n, 24 + \n * 8(sp)
	.cfi_restore fs\n
	.endr
	ld	ra, 216(sp)
	.cfi_restore ra
	addi	sp, sp, FRAME
	.cfi_def_cfa_offset 0
	ret
ELT_END(regs_call)

	.data
	.p2align 3
	.globl	regs_sp_at_call
regs_sp_at_call:	.dword 0

	ELT_OBJECT_NOTES
