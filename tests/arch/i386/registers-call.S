/*
 * i386: call a helper with every register set from a struct regs and
 * capture every register after it.  Single-threaded.  Position
 * independent: its statics are reached GOT-relative through %ebx, the one
 * register it needs before loading the canaries and after the call.
 */
#include "asm.h"
#include "registers-i386.h"

	.bss
	.p2align 2
saved_esp:	.long 0
out_ptr:	.long 0
eax_after:	.long 0
ebx_after:	.long 0
mxcsr_before:	.long 0         /* the test's own, given back at the end */
fpucw_before:	.long 0

	.text
	.p2align 4
	.type	regs_pc_thunk_bx, %function
regs_pc_thunk_bx:
	.cfi_startproc
	movl	(%esp), %ebx
	ret
	.cfi_endproc
	.size	regs_pc_thunk_bx, . - regs_pc_thunk_bx

/* void regs_call(void (*helper)(void), const struct regs *in,
 *                struct regs *out) */
ELT_ENTRY(regs_call)
	pushl	%ebp
	.cfi_adjust_cfa_offset 4
	.cfi_rel_offset %ebp, 0
	movl	%esp, %ebp
	.cfi_def_cfa_register %ebp
	pushl	%ebx
	.cfi_offset %ebx, -12
	pushl	%esi
	.cfi_offset %esi, -16
	pushl	%edi
	.cfi_offset %edi, -20
	call	regs_pc_thunk_bx
	addl	$_GLOBAL_OFFSET_TABLE_, %ebx
	movl	%esp, saved_esp@GOTOFF(%ebx)
	movl	12(%ebp), %esi          /* in */
	movl	16(%ebp), %eax          /* out */
	movl	%eax, out_ptr@GOTOFF(%ebx)
	movl	REGS_WIDTH(%esi), %ecx  /* capture as much as was loaded */
	movl	%ecx, REGS_WIDTH(%eax)
	fnstcw	fpucw_before@GOTOFF(%ebx)
	cmpl	$WIDTH_NONE, %ecx
	je	1f
	stmxcsr	mxcsr_before@GOTOFF(%ebx)
1:
	/* The stack: the helper's address in the slot above the two pushed
	 * words, %esp = 0 mod 16 at the call, or 12 mod 16 when misaligned
	 * (a caller that keeps only the 4-byte alignment of the old ABI). */
	movl	8(%ebp), %edx
	andl	$-16, %esp
	subl	$4, %esp
	cmpl	$0, REGS_MISALIGN(%esi)
	je	2f
	subl	$4, %esp
2:	pushl	%edx
	movl	%esp, regs_esp_at_call@GOTOFF(%ebx)
	pushl	REGS_CALLER_SP(%esi)
	pushl	REGS_FUNCTION_ID(%esi)

	/* x87 stack as a function returning a float/double/long double
	 * leaves it */
	fninit
	fldcw	REGS_FPUCW(%esi)
	movl	REGS_X87_DEPTH(%esi), %eax
	cmpl	$2, %eax
	jne	3f
	fldt	REGS_X87 + 16(%esi)
3:	testl	%eax, %eax
	je	4f
	fldt	REGS_X87(%esi)
4:	fnstsw	%ax
	movw	%ax, regs_fpusw_at_call@GOTOFF(%ebx)

	movl	REGS_WIDTH(%esi), %eax
	cmpl	$WIDTH_SSE, %eax
	jb	.Lloaded
	ldmxcsr	REGS_MXCSR(%esi)
	ja	.Lload_wide
	.irp	n, 0, 1, 2, 3, 4, 5, 6, 7
	movups	REGS_VEC + \n * 64(%esi), %xmm\n
	.endr
	jmp	.Lloaded
.Lload_wide:
	cmpl	$WIDTH_AVX, %eax
	ja	.Lload_avx512
	.irp	n, 0, 1, 2, 3, 4, 5, 6, 7
	vmovdqu	REGS_VEC + \n * 64(%esi), %ymm\n
	.endr
	jmp	.Lloaded
.Lload_avx512:
	.irp	n, 0, 1, 2, 3, 4, 5, 6, 7
	vmovdqu64 REGS_VEC + \n * 64(%esi), %zmm\n
	.endr
.Lloaded:
	movl	REGS_GPR + EAX * 4(%esi), %eax
	movl	REGS_GPR + ECX * 4(%esi), %ecx
	movl	REGS_GPR + EDX * 4(%esi), %edx
	movl	REGS_GPR + EBX * 4(%esi), %ebx
	movl	REGS_GPR + EBP * 4(%esi), %ebp
	movl	REGS_GPR + EDI * 4(%esi), %edi
	movl	REGS_GPR + ESI * 4(%esi), %esi

	call	*8(%esp)                /* the helper pops id and caller SP */

	pushl	%ebx
	call	regs_pc_thunk_bx
	addl	$_GLOBAL_OFFSET_TABLE_, %ebx
	movl	%eax, eax_after@GOTOFF(%ebx)
	popl	%eax
	movl	%eax, ebx_after@GOTOFF(%ebx)
	movl	out_ptr@GOTOFF(%ebx), %eax
	movl	%ecx, REGS_GPR + ECX * 4(%eax)
	movl	%edx, REGS_GPR + EDX * 4(%eax)
	movl	%esp, REGS_GPR + ESP * 4(%eax)
	movl	%ebp, REGS_GPR + EBP * 4(%eax)
	movl	%esi, REGS_GPR + ESI * 4(%eax)
	movl	%edi, REGS_GPR + EDI * 4(%eax)
	movl	eax_after@GOTOFF(%ebx), %ecx
	movl	%ecx, REGS_GPR + EAX * 4(%eax)
	movl	ebx_after@GOTOFF(%ebx), %ecx
	movl	%ecx, REGS_GPR + EBX * 4(%eax)
	movl	%eax, %esi

	movl	REGS_WIDTH(%esi), %eax
	cmpl	$WIDTH_SSE, %eax
	jb	.Lstored
	stmxcsr	REGS_MXCSR(%esi)
	ja	.Lstore_wide
	.irp	n, 0, 1, 2, 3, 4, 5, 6, 7
	movups	%xmm\n, REGS_VEC + \n * 64(%esi)
	.endr
	jmp	.Lstored
.Lstore_wide:
	cmpl	$WIDTH_AVX, %eax
	ja	.Lstore_avx512
	.irp	n, 0, 1, 2, 3, 4, 5, 6, 7
	vmovdqu	%ymm\n, REGS_VEC + \n * 64(%esi)
	.endr
	jmp	.Lstored_wide
.Lstore_avx512:
	.irp	n, 0, 1, 2, 3, 4, 5, 6, 7
	vmovdqu64 %zmm\n, REGS_VEC + \n * 64(%esi)
	.endr
.Lstored_wide:
	vzeroupper
.Lstored:
	fnstcw	REGS_FPUCW(%esi)
	fnstsw	REGS_FPUSW(%esi)
	/* count and pop what is on the x87 stack */
	movl	$0, REGS_X87_DEPTH(%esi)
	.irp	n, 0, 1
	fxam
	fnstsw	%ax
	andw	$0x4500, %ax
	cmpw	$0x4100, %ax
	je	5f
	fstpt	REGS_X87 + \n * 16(%esi)
	incl	REGS_X87_DEPTH(%esi)
	.endr
5:	fninit                          /* anything deeper is a failure already */
	fldcw	fpucw_before@GOTOFF(%ebx)
	cmpl	$WIDTH_NONE, REGS_WIDTH(%esi)
	je	6f
	ldmxcsr	mxcsr_before@GOTOFF(%ebx)
6:
	movl	saved_esp@GOTOFF(%ebx), %esp
	popl	%edi
	popl	%esi
	popl	%ebx
	popl	%ebp
	.cfi_def_cfa %esp, 4
	ret
ELT_END(regs_call)

/* void regs_clobber_vectors(unsigned width): every bit of xmm0-7 set to a
 * pattern no canary has, with only SSE1 (and AVX1 for the upper halves). */
ELT_ENTRY(regs_clobber_vectors)
	movl	4(%esp), %eax
	cmpl	$WIDTH_SSE, %eax
	jb	2f
	ja	1f
	xorps	%xmm0, %xmm0
	movaps	%xmm0, %xmm1
	cmpeqps	%xmm1, %xmm1            /* all ones */
	.irp	n, 2, 3, 4, 5, 6, 7
	movaps	%xmm1, %xmm\n
	.endr
	ret
1:	vxorps	%ymm0, %ymm0, %ymm0
	vcmpeqps %ymm0, %ymm0, %ymm1    /* all ones, 256 bits */
	.irp	n, 2, 3, 4, 5, 6, 7
	vmovaps	%ymm1, %ymm\n
	.endr
	vzeroupper                      /* as C code does: the upper halves go */
2:	ret
ELT_END(regs_clobber_vectors)

	.data
	.p2align 4
	.globl	regs_esp_at_call, regs_fpusw_at_call
regs_esp_at_call:	.long 0
regs_fpusw_at_call:	.long 0

	ELT_OBJECT_NOTES
