/*
 * The x86-64 register fixtures' shared part (System V and Win64): load
 * every general and vector register from the struct regs at %rsi, call
 * the helper with its two stack words, store every register into
 * out_ptr's struct.  Each fixture defines the REGS_* offsets and the
 * variables used here (helper_ptr, function_id, caller_sp, out_ptr,
 * rax_after, regs_rsp_at_call) and does its ABI's own part around them.
 */
#ifndef ELT_TESTS_X86_64_REGISTERS_IO_H
#define ELT_TESTS_X86_64_REGISTERS_IO_H

/* All 16 vector registers, at the width REGS_WIDTH says. */
.macro LOAD_VECTORS
	movl	REGS_WIDTH(%rsi), %eax
	cmpl	$1, %eax
	je	.Lload_avx\@
	ja	.Lload_avx512\@
	.irp	n, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15
	movdqu	REGS_VEC + \n * 64(%rsi), %xmm\n
	.endr
	jmp	.Lloaded\@
.Lload_avx\@:
	.irp	n, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15
	vmovdqu	REGS_VEC + \n * 64(%rsi), %ymm\n
	.endr
	jmp	.Lloaded\@
.Lload_avx512\@:
	.irp	n, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15
	vmovdqu64 REGS_VEC + \n * 64(%rsi), %zmm\n
	.endr
.Lloaded\@:
.endm

/* Every general register but %rsp; %rsi last, since it points at *in. */
.macro LOAD_GPRS
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

.endm

/* The call as instrumented code makes it: caller SP, function id, call. */
.macro CALL_HELPER
	movq	%rsp, regs_rsp_at_call(%rip)
	pushq	caller_sp(%rip)
	pushq	function_id(%rip)
	call	*helper_ptr(%rip)

.endm

/* Every general register into *out_ptr, which then stays in %rsi. */
.macro STORE_GPRS
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

.endm

.macro STORE_VECTORS
	movl	REGS_WIDTH(%rsi), %eax
	cmpl	$1, %eax
	je	.Lstore_avx\@
	ja	.Lstore_avx512\@
	.irp	n, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15
	movdqu	%xmm\n, REGS_VEC + \n * 64(%rsi)
	.endr
	jmp	.Lstored\@
.Lstore_avx\@:
	.irp	n, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15
	vmovdqu	%ymm\n, REGS_VEC + \n * 64(%rsi)
	.endr
	jmp	.Lstored\@
.Lstore_avx512\@:
	.irp	n, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15
	vmovdqu64 %zmm\n, REGS_VEC + \n * 64(%rsi)
	.endr
.Lstored\@:
.endm

#endif
