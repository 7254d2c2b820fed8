/*
 * The references the helpers are measured against (bench-helpers.c),
 * built as a shared library of their own (libbench-hook) so that the
 * dynamic linker maps them as far from the benchmark's probes as
 * libasyncelt's helpers: on some CPUs a call from the executable into a
 * shared library costs more than a call of the same code nearby
 * (doc/performance.md), and a floor must pay what the helpers pay.
 * reference-pairs-x86_64.S calls them as the probes call the helpers.
 *
 * - bench_stub_{sse,avx,avx512}: save what a helper must (the nine
 *   caller-saved general registers and xmm/ymm/zmm 0-7 at one width),
 *   clear the upper vector halves, call the empty C function the
 *   benchmark gives bench_set_stub_callee (through a pointer, as the
 *   dispatcher calls a plugin) and restore it all.  No plugin, no lookup,
 *   no classification: the floor for a hook that keeps every register.
 * - bench_far_hook: an idle helper without its test of the armed byte, a
 *   `ret $16` popping the id and caller SP: the floor for any hook
 *   called out of line.
 */
#include "asm.h"

	.text

.macro STUB name, width
ELT_SEGMENT_ENTRY(\name)
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
	call	*bench_stub_callee(%rip)
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

	STUB	bench_stub_sse, 16
	STUB	bench_stub_avx, 32
	STUB	bench_stub_avx512, 64

ELT_SEGMENT_ENTRY(bench_far_hook)
	ret	$16
ELT_END(bench_far_hook)

/* bench_set_stub_callee(function): what the stubs call.  A setter, not
 * an exported variable: an executable's copy relocation would leave the
 * stubs reading another copy than the one it writes. */
ELT_ENTRY(bench_set_stub_callee)
	movq	%rdi, bench_stub_callee(%rip)
	ret
ELT_END(bench_set_stub_callee)

	.data
	.p2align 3
bench_stub_callee:
	.quad	0

	ELT_OBJECT_NOTES
