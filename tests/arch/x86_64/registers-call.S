/*
 * x86-64: call a helper with every register set from a struct regs and
 * capture every register after it.  Single-threaded.
 */
#include "asm.h"
#include "registers-x86_64.h"
#include "registers-io.h"

	.bss
	.p2align 3
saved_rsp:	.quad 0
out_ptr:	.quad 0
helper_ptr:	.quad 0
function_id:	.quad 0
caller_sp:	.quad 0
rax_after:	.quad 0

	.text
/* void regs_call(void (*helper)(void), const struct regs *in,
 *                          struct regs *out) */
ELT_ENTRY(regs_call)
	pushq	%rbp
	.cfi_adjust_cfa_offset 8
	.cfi_rel_offset %rbp, 0
	movq	%rsp, %rbp
	.cfi_def_cfa_register %rbp
	pushq	%rbx
	pushq	%r12
	pushq	%r13
	pushq	%r14
	pushq	%r15
	subq	$8, %rsp                /* %rsp = 0 mod 16 */
	movq	%rdi, helper_ptr(%rip)
	movq	%rdx, out_ptr(%rip)
	movl	REGS_WIDTH(%rsi), %eax  /* capture as much as was loaded */
	movl	%eax, REGS_WIDTH(%rdx)
	movq	REGS_FUNCTION_ID(%rsi), %rax
	movq	%rax, function_id(%rip)
	movq	REGS_CALLER_SP(%rsi), %rax
	movq	%rax, caller_sp(%rip)
	movq	%rsp, saved_rsp(%rip)
	cmpl	$0, REGS_MISALIGN(%rsi)
	je	1f
	subq	$8, %rsp                /* the helper must cope with this */
1:

	/* x87 stack as a function returning a long double leaves it */
	movl	REGS_X87_DEPTH(%rsi), %eax
	cmpl	$2, %eax
	jne	2f
	fldt	REGS_X87 + 16(%rsi)
2:	testl	%eax, %eax
	je	3f
	fldt	REGS_X87(%rsi)
3:	ldmxcsr	REGS_MXCSR(%rsi)
	fldcw	REGS_FPUCW(%rsi)

	LOAD_VECTORS
	LOAD_GPRS

	CALL_HELPER

	STORE_GPRS
	STORE_VECTORS
	stmxcsr	REGS_MXCSR(%rsi)
	fnstcw	REGS_FPUCW(%rsi)
	/* count and pop what is on the x87 stack */
	movl	$0, REGS_X87_DEPTH(%rsi)
	.irp	n, 0, 1
	fxam
	fnstsw	%ax
	andw	$0x4500, %ax
	cmpw	$0x4100, %ax
	je	4f
	fstpt	REGS_X87 + \n * 16(%rsi)
	incl	REGS_X87_DEPTH(%rsi)
	.endr
4:	fninit                          /* anything deeper is a failure already */
	fldcw	REGS_FPUCW(%rsi)
	vzeroupper

	movq	saved_rsp(%rip), %rsp
	addq	$8, %rsp
	popq	%r15
	popq	%r14
	popq	%r13
	popq	%r12
	popq	%rbx
	popq	%rbp
	.cfi_def_cfa %rsp, 8
	ret
ELT_END(regs_call)

	.data
	.p2align 4
	.globl	regs_rsp_at_call
regs_rsp_at_call:	.quad 0

	ELT_OBJECT_NOTES
