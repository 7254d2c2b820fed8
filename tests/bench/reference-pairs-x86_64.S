/*
 * The benchmark's reference pairs (bench-helpers.c): probe_lean_pair
 * (tests/arch/x86_64/probes.S) calling the references instead of the
 * helpers, in the same way: the full-save stubs and the empty hook of
 * references-x86_64.S, a shared library mapped like libasyncelt, and the
 * same empty hook beside the caller, which shows what the distance of a
 * call costs on this CPU.
 */
#include "asm.h"
#include "../probes.h"

	.text

/* probe_lean_pair calling a reference through a pointer in memory, as a
 * JIT calls code out of its reach.  (A call through the GOT to this
 * executable's own symbol would be relaxed to a direct one by the
 * linker.) */
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

/* references-x86_64.S's bench_far_hook, beside the probes. */
ELT_SEGMENT_ENTRY(bench_near_hook)
	ret	$16
ELT_END(bench_near_hook)
	.section .data.rel.ro, "aw"
	.p2align 3
bench_near_hook_address:
	.quad	bench_near_hook
bench_far_hook_address:
	.quad	bench_far_hook
	.text

	PAIR	bench_near_hook_pair, bench_near_hook, bench_near_hook
	PAIR	bench_far_hook_pair, bench_far_hook, bench_far_hook

	ELT_OBJECT_NOTES
