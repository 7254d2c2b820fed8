/*
 * x86-64 Windows: call a helper with every register set from a struct regs
 * and capture every register after it.  Single-threaded.
 */
#include "asm.h"
#include "registers-x86_64-win64.h"
#include "registers-io.h"

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

	LOAD_VECTORS
	LOAD_GPRS

	CALL_HELPER

	STORE_GPRS
	STORE_VECTORS
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
