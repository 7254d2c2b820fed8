/*
 * The reference the helpers are measured against (bench-helpers.c): a
 * hand-written stub pair that saves what a helper must (the nine
 * caller-saved general registers and xmm/ymm/zmm 0-7 at the CPU's width),
 * clears the upper vector halves, calls an empty C function and restores
 * it all; called exactly as the probes call the helpers.  No plugin, no
 * lookup, no classification: the floor for a register-saving hook.  And
 * the same function calling the real helpers, for the helper rows.
 */
#include "asm.h"

	.text

.macro STUB name, width
ELT_ENTRY(\name)
	pushq	%rbp
	.cfi_adjust_cfa_offset 8
	.cfi_rel_offset %rbp, 0
	movq	%rsp, %rbp
	.cfi_def_cfa_register %rbp
	subq	$640, %rsp
	andq	$-64, %rsp
	movq	%rdi, 0(%rsp)
	movq	%rsi, 8(%rsp)
	movq	%rdx, 16(%rsp)
	movq	%rcx, 24(%rsp)
	movq	%r8, 32(%rsp)
	movq	%r9, 40(%rsp)
	movq	%rax, 48(%rsp)
	movq	%r10, 56(%rsp)
	movq	%r11, 64(%rsp)
	.irp	n, 0, 1, 2, 3, 4, 5, 6, 7
	.if \width == 16
	movdqa	%xmm\n, 128 + \n * 64(%rsp)
	.elseif \width == 32
	vmovdqa	%ymm\n, 128 + \n * 64(%rsp)
	.else
	vmovdqa64 %zmm\n, 128 + \n * 64(%rsp)
	.endif
	.endr
	.if \width > 16
	vzeroupper
	.endif
	movq	%rsp, %rdi
	call	bench_empty_c
	.irp	n, 0, 1, 2, 3, 4, 5, 6, 7
	.if \width == 16
	movdqa	128 + \n * 64(%rsp), %xmm\n
	.elseif \width == 32
	vmovdqa	128 + \n * 64(%rsp), %ymm\n
	.else
	vmovdqa64 128 + \n * 64(%rsp), %zmm\n
	.endif
	.endr
	movq	0(%rsp), %rdi
	movq	8(%rsp), %rsi
	movq	16(%rsp), %rdx
	movq	24(%rsp), %rcx
	movq	32(%rsp), %r8
	movq	40(%rsp), %r9
	movq	48(%rsp), %rax
	movq	56(%rsp), %r10
	movq	64(%rsp), %r11
	movq	%rbp, %rsp
	.cfi_def_cfa_register %rsp
	popq	%rbp
	.cfi_adjust_cfa_offset -8
	.cfi_restore %rbp
	ret	$16
ELT_END(\name)
.endm

/* An instrumented function (id 0x1234) calling Enter then Leave as a JIT
 * would: unlike the test probes, it stores nothing to memory that another
 * thread also writes, so two threads running it share no cache line. */
.macro PAIR name, enter, leave
ELT_ENTRY(\name)
	pushq	%rbp
	.cfi_adjust_cfa_offset 8
	.cfi_rel_offset %rbp, 0
	movq	%rsp, %rbp
	.cfi_def_cfa_register %rbp
	leaq	16(%rbp), %r11
	pushq	%r11
	pushq	$0x1234
	call	\enter
	leaq	16(%rbp), %r11
	pushq	%r11
	pushq	$0x1234
	call	\leave
	popq	%rbp
	.cfi_def_cfa %rsp, 8
	ret
ELT_END(\name)
.endm

/* The same function, as code that tests the armed byte first
 * (elt_helpers_armed(), kept in bench_armed) and calls a helper only while
 * it is set: an idle hook is a load, a compare and a branch. */
.macro GUARDED_CALL helper
	movq	bench_armed(%rip), %r11
	cmpb	$0, (%r11)
	je	.Lskip\@
	leaq	16(%rbp), %r11
	pushq	%r11
	pushq	$0x1234
	call	\helper
.Lskip\@:
.endm

ELT_ENTRY(bench_guarded_pair)
	pushq	%rbp
	.cfi_adjust_cfa_offset 8
	.cfi_rel_offset %rbp, 0
	movq	%rsp, %rbp
	.cfi_def_cfa_register %rbp
	GUARDED_CALL elt_helper_enter
	GUARDED_CALL elt_helper_leave
	popq	%rbp
	.cfi_def_cfa %rsp, 8
	ret
ELT_END(bench_guarded_pair)

	STUB	bench_stub_sse, 16
	STUB	bench_stub_avx, 32
	STUB	bench_stub_avx512, 64
	PAIR	bench_stub_pair_sse, bench_stub_sse, bench_stub_sse
	PAIR	bench_stub_pair_avx, bench_stub_avx, bench_stub_avx
	PAIR	bench_stub_pair_avx512, bench_stub_avx512, bench_stub_avx512
	PAIR	bench_helper_pair, elt_helper_enter, elt_helper_leave

	ELT_OBJECT_NOTES
