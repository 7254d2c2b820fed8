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

/* probe_lean_pair calling a reference as it calls the helpers: `target`
 * is the call's operand.  The references in libbench-hook are called
 * through their GOT slots, as the probes call the helpers: a data word
 * holding a library function's address would, in an executable built
 * without PIE, hold a PLT entry's, and add its jump. */
.macro PAIR name, target
ELT_ENTRY(\name)
	pushq	%rbp
	.cfi_adjust_cfa_offset 8
	.cfi_rel_offset %rbp, 0
	movq	%rsp, %rbp
	.cfi_def_cfa_register %rbp
	.rept	2
	leaq	16(%rbp), %r11
	pushq	%r11
	pushq	$PROBE_LEAN_ID
	call	*\target
	.endr
	popq	%rbp
	.cfi_def_cfa %rsp, 8
	ret
ELT_END(\name)
.endm

	PAIR	bench_stub_pair_sse, bench_stub_sse@GOTPCREL(%rip)
	PAIR	bench_stub_pair_avx, bench_stub_avx@GOTPCREL(%rip)
	PAIR	bench_stub_pair_avx512, bench_stub_avx512@GOTPCREL(%rip)
	PAIR	bench_far_hook_pair, bench_far_hook@GOTPCREL(%rip)

/* references-x86_64.S's bench_far_hook, beside the probes, called through
 * a word in memory (a GOT call of this executable's own symbol would be
 * relaxed to a direct one by the linker). */
ELT_SEGMENT_ENTRY(bench_near_hook)
	ret	$16
ELT_END(bench_near_hook)
	.section .data.rel.ro, "aw"
	.p2align 3
bench_near_hook_address:
	.quad	bench_near_hook
	.text

	PAIR	bench_near_hook_pair, bench_near_hook_address(%rip)

	ELT_OBJECT_NOTES
