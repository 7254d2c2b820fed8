/*
 * The reference the helpers are measured against (bench-helpers.c): a
 * hand-written stub pair that saves what a helper must (the nine
 * caller-saved general registers and xmm/ymm/zmm 0-7 at the CPU's width),
 * clears the upper vector halves, calls an empty C function and restores
 * it all; called exactly as the probes call the helpers.  No plugin, no
 * lookup, no classification: the floor for a register-saving hook.  The
 * helper rows call the same function, tests/probes.h's probe_lean_pair.
 */
#include "asm.h"
#include "../probes.h"

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

/* probe_lean_pair (tests/arch/x86_64/probes.S) calling the stubs, as it
 * calls the helpers: through a pointer in memory, as a JIT calls code
 * out of its reach.  (A call through the GOT to this executable's own
 * symbol would be relaxed to a direct one by the linker.) */
.macro PAIR name, enter, leave
ELT_ENTRY(\name)
	pushq	%rbp
	.cfi_adjust_cfa_offset 8
	.cfi_rel_offset %rbp, 0
	movq	%rsp, %rbp
	.cfi_def_cfa_register %rbp
	leaq	16(%rbp), %r11
	pushq	%r11
	pushq	$PROBE_LEAN_ID
	call	*\enter\()_address(%rip)
	leaq	16(%rbp), %r11
	pushq	%r11
	pushq	$PROBE_LEAN_ID
	call	*\leave\()_address(%rip)
	popq	%rbp
	.cfi_def_cfa %rsp, 8
	ret
ELT_END(\name)
.endm

	STUB	bench_stub_sse, 16
	STUB	bench_stub_avx, 32
	STUB	bench_stub_avx512, 64
	.section .data.rel.ro, "aw"
	.p2align 3
bench_stub_sse_address:
	.quad	bench_stub_sse
bench_stub_avx_address:
	.quad	bench_stub_avx
bench_stub_avx512_address:
	.quad	bench_stub_avx512
	.text

	PAIR	bench_stub_pair_sse, bench_stub_sse, bench_stub_sse
	PAIR	bench_stub_pair_avx, bench_stub_avx, bench_stub_avx
	PAIR	bench_stub_pair_avx512, bench_stub_avx512, bench_stub_avx512

	ELT_OBJECT_NOTES
