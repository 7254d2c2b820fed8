/*
 * AArch64: call a helper with every register set from a struct regs and
 * capture every register after it.  Single-threaded.
 *
 * SP can never be misaligned on AArch64 (the ABI wants 16 bytes at every
 * access through it, and Linux has the hardware check it), so the
 * "misaligned" call is the worst a caller may do: SP = 16 mod 32.
 */
#include "asm.h"
#include "registers-aarch64.h"

#define FRAME 176               /* x29, x30, x19-x28, d8-d15, fpcr, fpsr */

	.arch_extension sve     /* used only when the CPU has it */

	.bss
	.p2align 3
saved_sp:	.quad 0
out_ptr:	.quad 0

	.text
/* void regs_call(void (*helper)(void), const struct regs *in,
 *                struct regs *out) */
ELT_ENTRY(regs_call)
	stp	x29, x30, [sp, #-FRAME]!
	.cfi_def_cfa_offset FRAME
	.cfi_offset x29, -FRAME
	.cfi_offset x30, -FRAME + 8
	mov	x29, sp
	stp	x19, x20, [sp, #16]
	stp	x21, x22, [sp, #32]
	stp	x23, x24, [sp, #48]
	stp	x25, x26, [sp, #64]
	stp	x27, x28, [sp, #80]
	stp	d8, d9, [sp, #96]
	stp	d10, d11, [sp, #112]
	stp	d12, d13, [sp, #128]
	stp	d14, d15, [sp, #144]
	.cfi_offset x19, -FRAME + 16
	.cfi_offset x20, -FRAME + 24
	.cfi_offset x21, -FRAME + 32
	.cfi_offset x22, -FRAME + 40
	.cfi_offset x23, -FRAME + 48
	.cfi_offset x24, -FRAME + 56
	.cfi_offset x25, -FRAME + 64
	.cfi_offset x26, -FRAME + 72
	.cfi_offset x27, -FRAME + 80
	.cfi_offset x28, -FRAME + 88
	mrs	x9, fpcr
	mrs	x10, fpsr
	stp	x9, x10, [sp, #160]
	/* From here x29 and every other register carry canaries: nothing
	 * unwinds through this function until it restores them. */
	adrp	x9, saved_sp
	mov	x10, sp
	str	x10, [x9, :lo12:saved_sp]
	adrp	x9, out_ptr
	str	x2, [x9, :lo12:out_ptr]
	mov	x13, x0                 /* the helper */
	mov	x12, x1                 /* in */
	ldr	x9, [x12, #REGS_VL]     /* capture as much as is loaded */
	str	x9, [x2, #REGS_VL]

	mov	x10, sp
	and	x10, x10, #~31
	mov	sp, x10
	ldr	w11, [x12, #REGS_MISALIGN]
	cbz	w11, 1f
	sub	sp, sp, #16             /* the helper must cope with this */
1:	mov	x10, sp
	adrp	x9, regs_sp_at_call
	str	x10, [x9, :lo12:regs_sp_at_call]
	adr	x10, 2f
	adrp	x9, regs_return_point
	str	x10, [x9, :lo12:regs_return_point]

	ldr	x10, [x12, #REGS_FPCR]
	ldr	x11, [x12, #REGS_FPSR]
	msr	fpcr, x10
	msr	fpsr, x11
	.irp	n, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31
	ldr	q\n, [x12, #REGS_Q + \n * 16]
	.endr
	/* SVE: the whole z registers (their low 128 bits are the q values)
	 * and the predicates, after the q loads, which zero the rest */
	ldr	x14, [x12, #REGS_VL]
	cbz	x14, 3f
	add	x14, x12, #REGS_Z
	.irp	n, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31
	ldr	z\n, [x14, #\n, mul vl]
	.endr
	mov	x15, #REGS_P
	add	x14, x12, x15
	.irp	n, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15
	ldr	p\n, [x14, #\n, mul vl]
	.endr
3:	ldr	x9, [x12, #REGS_FUNCTION_ID]
	ldr	x10, [x12, #REGS_CALLER_SP]
	ldp	x0, x1, [x12, #REGS_X + 0 * 8]
	ldp	x2, x3, [x12, #REGS_X + 2 * 8]
	ldp	x4, x5, [x12, #REGS_X + 4 * 8]
	ldp	x6, x7, [x12, #REGS_X + 6 * 8]
	ldr	x8, [x12, #REGS_X + 8 * 8]
	ldp	x19, x20, [x12, #REGS_X + 19 * 8]
	ldp	x21, x22, [x12, #REGS_X + 21 * 8]
	ldp	x23, x24, [x12, #REGS_X + 23 * 8]
	ldp	x25, x26, [x12, #REGS_X + 25 * 8]
	ldp	x27, x28, [x12, #REGS_X + 27 * 8]
	ldr	x29, [x12, #REGS_X + 29 * 8]

	stp	x9, x10, [sp, #-16]!    /* function id, caller SP */
	blr	x13
2:
	adrp	x9, out_ptr
	ldr	x9, [x9, :lo12:out_ptr]
	stp	x0, x1, [x9, #REGS_X + 0 * 8]
	stp	x2, x3, [x9, #REGS_X + 2 * 8]
	stp	x4, x5, [x9, #REGS_X + 4 * 8]
	stp	x6, x7, [x9, #REGS_X + 6 * 8]
	str	x8, [x9, #REGS_X + 8 * 8]
	stp	x19, x20, [x9, #REGS_X + 19 * 8]
	stp	x21, x22, [x9, #REGS_X + 21 * 8]
	stp	x23, x24, [x9, #REGS_X + 23 * 8]
	stp	x25, x26, [x9, #REGS_X + 25 * 8]
	stp	x27, x28, [x9, #REGS_X + 27 * 8]
	stp	x29, x30, [x9, #REGS_X + 29 * 8]
	mov	x10, sp
	str	x10, [x9, #REGS_SP]
	.irp	n, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31
	str	q\n, [x9, #REGS_Q + \n * 16]
	.endr
	mrs	x10, fpcr
	mrs	x11, fpsr
	str	x10, [x9, #REGS_FPCR]
	str	x11, [x9, #REGS_FPSR]
	ldr	x10, [x9, #REGS_VL]
	cbz	x10, 4f
	add	x10, x9, #REGS_Z
	.irp	n, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31
	str	z\n, [x10, #\n, mul vl]
	.endr
	mov	x11, #REGS_P
	add	x10, x9, x11
	.irp	n, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15
	str	p\n, [x10, #\n, mul vl]
	.endr
4:

	adrp	x9, saved_sp
	ldr	x10, [x9, :lo12:saved_sp]
	mov	sp, x10
	ldp	x9, x10, [sp, #160]
	msr	fpcr, x9
	msr	fpsr, x10
	ldp	x19, x20, [sp, #16]
	ldp	x21, x22, [sp, #32]
	ldp	x23, x24, [sp, #48]
	ldp	x25, x26, [sp, #64]
	ldp	x27, x28, [sp, #80]
	ldp	d8, d9, [sp, #96]
	ldp	d10, d11, [sp, #112]
	ldp	d12, d13, [sp, #128]
	ldp	d14, d15, [sp, #144]
	ldp	x29, x30, [sp], #FRAME
	.cfi_def_cfa_offset 0
	.cfi_restore x29
	.cfi_restore x30
	.cfi_restore x19
	.cfi_restore x20
	.cfi_restore x21
	.cfi_restore x22
	.cfi_restore x23
	.cfi_restore x24
	.cfi_restore x25
	.cfi_restore x26
	.cfi_restore x27
	.cfi_restore x28
	ret
ELT_END(regs_call)

/* uint64_t regs_sve_vl(void) */
ELT_ENTRY(regs_sve_vl)
	rdvl	x0, #1
	ret
ELT_END(regs_sve_vl)

/* void regs_clobber_sve(void): what the base procedure call standard
 * lets any function change (z8-z15 keep their low 64 bits, d8-d15). */
ELT_ENTRY(regs_clobber_sve)
	.irp	n, 0, 1, 2, 3, 4, 5, 6, 7, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31
	mov	z\n\().b, #-1
	.endr
	.irp	n, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15
	pfalse	p\n\().b
	.endr
	ret
ELT_END(regs_clobber_sve)

	.data
	.p2align 3
	.globl	regs_sp_at_call, regs_return_point
regs_sp_at_call:	.quad 0
regs_return_point:	.quad 0

	ELT_OBJECT_NOTES
