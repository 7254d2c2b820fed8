/*
 * x86-64 Windows: call a helper with every register set from a struct regs
 * and capture every register after it.  Single-threaded.
 */
#include "asm.h"
#include "registers-x86_64-win64.h"

	.bss
	.p2align 3
saved_rsp:	.quad 0
out_ptr:	.quad 0
helper_ptr:	.quad 0
function_id:	.quad 0
caller_sp:	.quad 0
rax_after:	.quad 0
c_mxcsr:	.long 0
c_fpucw:	.long 0

/* xmm6-15 are callee-saved: 10 x 16 bytes, plus 8 to align */
#define XMM_SAVE 168

	.text
/* void regs_call(void (*helper)(void) %rcx, const struct regs *in %rdx,
 *                struct regs *out %r8) */
ELT_ENTRY(regs_call)
	pushq	%rbp
	.seh_pushreg %rbp
	pushq	%rbx
	.seh_pushreg %rbx
	pushq	%rdi
	.seh_pushreg %rdi
	pushq	%rsi
	.seh_pushreg %rsi
	pushq	%r12
	.seh_pushreg %r12
	pushq	%r13
	.seh_pushreg %r13
	pushq	%r14
	.seh_pushreg %r14
	pushq	%r15
	.seh_pushreg %r15
	subq	$XMM_SAVE, %rsp         /* %rsp = 0 mod 16 */
	.seh_stackalloc XMM_SAVE
	.irp	n, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15
	movdqa	%xmm\n, (\n - 6) * 16(%rsp)
	.seh_savexmm %xmm\n, (\n - 6) * 16
	.endr
	.seh_endprologue

	stmxcsr	c_mxcsr(%rip)
	fnstcw	c_fpucw(%rip)
	movq	%rcx, helper_ptr(%rip)
	movq	%r8, out_ptr(%rip)
	movq	%rdx, %rsi
	movl	REGS_WIDTH(%rsi), %eax  /* capture as much as was loaded */
	movl	%eax, REGS_WIDTH(%r8)
	movq	REGS_FUNCTION_ID(%rsi), %rax
	movq	%rax, function_id(%rip)
	movq	REGS_CALLER_SP(%rsi), %rax
	movq	%rax, caller_sp(%rip)
	movq	%rsp, saved_rsp(%rip)
	cmpl	$0, REGS_MISALIGN(%rsi)
	je	1f
	subq	$8, %rsp                /* the helper must cope with this */
1:	ldmxcsr	REGS_MXCSR(%rsi)
	fldcw	REGS_FPUCW(%rsi)

	movl	REGS_WIDTH(%rsi), %eax
	cmpl	$1, %eax
	je	.Lload_avx
	ja	.Lload_avx512
	.irp	n, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15
	movdqu	REGS_VEC + \n * 64(%rsi), %xmm\n
	.endr
	jmp	.Lloaded
.Lload_avx:
	.irp	n, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15
	vmovdqu	REGS_VEC + \n * 64(%rsi), %ymm\n
	.endr
	jmp	.Lloaded
.Lload_avx512:
	.irp	n, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15
	vmovdqu64 REGS_VEC + \n * 64(%rsi), %zmm\n
	.endr
.Lloaded:
	movq	REGS_GPR + 0 * 8(%rsi), %rax
	movq	REGS_GPR + 1 * 8(%rsi), %rcx
	movq	REGS_GPR + 2 * 8(%rsi), %rdx
	movq	REGS_GPR + 3 * 8(%rsi), %rbx
	movq	REGS_GPR + 5 * 8(%rsi), %rbp
	movq	REGS_GPR + 7 * 8(%rsi), %rdi
	movq	REGS_GPR + 8 * 8(%rsi), %r8
	movq	REGS_GPR + 9 * 8(%rsi), %r9
	movq	REGS_GPR + 10 * 8(%rsi), %r10
	movq	REGS_GPR + 11 * 8(%rsi), %r11
	movq	REGS_GPR + 12 * 8(%rsi), %r12
	movq	REGS_GPR + 13 * 8(%rsi), %r13
	movq	REGS_GPR + 14 * 8(%rsi), %r14
	movq	REGS_GPR + 15 * 8(%rsi), %r15
	movq	REGS_GPR + 6 * 8(%rsi), %rsi

	movq	%rsp, regs_rsp_at_call(%rip)
	pushq	caller_sp(%rip)
	pushq	function_id(%rip)
	call	*helper_ptr(%rip)

	movq	%rax, rax_after(%rip)
	movq	out_ptr(%rip), %rax
	movq	%rcx, REGS_GPR + 1 * 8(%rax)
	movq	%rdx, REGS_GPR + 2 * 8(%rax)
	movq	%rbx, REGS_GPR + 3 * 8(%rax)
	movq	%rsp, REGS_GPR + 4 * 8(%rax)
	movq	%rbp, REGS_GPR + 5 * 8(%rax)
	movq	%rsi, REGS_GPR + 6 * 8(%rax)
	movq	%rdi, REGS_GPR + 7 * 8(%rax)
	movq	%r8, REGS_GPR + 8 * 8(%rax)
	movq	%r9, REGS_GPR + 9 * 8(%rax)
	movq	%r10, REGS_GPR + 10 * 8(%rax)
	movq	%r11, REGS_GPR + 11 * 8(%rax)
	movq	%r12, REGS_GPR + 12 * 8(%rax)
	movq	%r13, REGS_GPR + 13 * 8(%rax)
	movq	%r14, REGS_GPR + 14 * 8(%rax)
	movq	%r15, REGS_GPR + 15 * 8(%rax)
	movq	rax_after(%rip), %rbx
	movq	%rbx, REGS_GPR + 0 * 8(%rax)
	movq	%rax, %rsi

	movl	REGS_WIDTH(%rsi), %eax
	cmpl	$1, %eax
	je	.Lstore_avx
	ja	.Lstore_avx512
	.irp	n, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15
	movdqu	%xmm\n, REGS_VEC + \n * 64(%rsi)
	.endr
	jmp	.Lstored
.Lstore_avx:
	.irp	n, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15
	vmovdqu	%ymm\n, REGS_VEC + \n * 64(%rsi)
	.endr
	jmp	.Lstored
.Lstore_avx512:
	.irp	n, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15
	vmovdqu64 %zmm\n, REGS_VEC + \n * 64(%rsi)
	.endr
.Lstored:
	stmxcsr	REGS_MXCSR(%rsi)
	fnstcw	REGS_FPUCW(%rsi)
	ldmxcsr	c_mxcsr(%rip)           /* the C code's own control words back */
	fldcw	c_fpucw(%rip)
	movl	REGS_WIDTH(%rsi), %eax
	testl	%eax, %eax
	je	5f
	vzeroupper
5:
	movq	saved_rsp(%rip), %rsp
	.irp	n, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15
	movdqa	(\n - 6) * 16(%rsp), %xmm\n
	.endr
	addq	$XMM_SAVE, %rsp
	popq	%r15
	popq	%r14
	popq	%r13
	popq	%r12
	popq	%rsi
	popq	%rdi
	popq	%rbx
	popq	%rbp
	ret
ELT_END(regs_call)

	.data
	.p2align 4
	.globl	regs_rsp_at_call
regs_rsp_at_call:	.quad 0

	ELT_OBJECT_NOTES
