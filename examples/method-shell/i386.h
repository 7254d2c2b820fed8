/*
 * The method shell for i386 System V, Linux (see shell.h; the helper
 * protocol is in doc/abi.md): cdecl, K and the arguments on the stack;
 * the continuation return register is %ecx, a result in %edx:%eax or st0.
 * Position independent: %ebx holds the GOT.  Include "asm.h" first.
 *
 * Body results: Linux i386 returns every struct in memory: the int and
 * double bodies ({value, continuation}, 12 bytes, the continuation at
 * offset 8) write through a hidden pointer passed first, which they pop
 * (ret $4).  Void bodies return the continuation in %eax.
 */

/* Frame, below the saved %ebp: %ebx, %esi, %edi, the body's result, then
 * the outgoing arguments at %esp = %ebp - 56 (16-aligned for the C body
 * when the method's caller was). */
#define SHELL_RESULT -32
#define SHELL_FRAME   44

/* Loads %ebx with its own return address: the GOT comes from there,
 * position-independently.  Emitted by the first method of an object. */
.macro SHELL_PC_THUNK
	.ifndef shell_pc_thunk_bx
	.p2align 4
	.type	shell_pc_thunk_bx, %function
shell_pc_thunk_bx:
	.cfi_startproc
	movl	(%esp), %ebx
	ret
	.cfi_endproc
	.size	shell_pc_thunk_bx, . - shell_pc_thunk_bx
	.endif
.endm

/* Pushes the caller SP (%ebp + 8: the first argument, above the return
 * address) without a register, then the function id kept in %edi. */
.macro SHELL_PUSH_HELPER_ARGS
	pushl	%ebp
	addl	$8, (%esp)
	pushl	%edi
.endm

.macro SHELL_METHOD name, body, kind, clobbered
	SHELL_PC_THUNK
ELT_ENTRY(\name)
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
	subl	$SHELL_FRAME, %esp
	call	shell_pc_thunk_bx
	addl	$_GLOBAL_OFFSET_TABLE_, %ebx
	leal	\name@GOTOFF(%ebx), %edi        /* function id */

	SHELL_PUSH_HELPER_ARGS
	call	elt_helper_enter@PLT    /* pops both */

	/* the body, with the arguments the method was given */
	.if \kind == SHELL_RET_VOID
	movl	8(%ebp), %eax           /* K */
	movl	%eax, 0(%esp)
	movl	12(%ebp), %eax
	movl	%eax, 4(%esp)
	movl	16(%ebp), %eax
	movl	%eax, 8(%esp)
	call	\body@PLT
	movl	%eax, %ecx
	.else
	leal	SHELL_RESULT(%ebp), %eax
	movl	%eax, 0(%esp)
	movl	8(%ebp), %eax           /* K */
	movl	%eax, 4(%esp)
	movl	12(%ebp), %eax
	movl	%eax, 8(%esp)
	movl	16(%ebp), %eax
	movl	%eax, 12(%esp)
	call	\body@PLT
	subl	$4, %esp                /* the body popped its result pointer */
	movl	SHELL_RESULT + 8(%ebp), %ecx
	.if \kind == SHELL_RET_INT
	movl	SHELL_RESULT(%ebp), %eax
	movl	SHELL_RESULT + 4(%ebp), %edx
	testl	%ecx, %ecx
	jz	1f
	movl	$0x5eed5eed, %eax       /* a suspension has no result */
	movl	%eax, %edx
1:
	.else
	fldl	SHELL_RESULT(%ebp)      /* st0, as the ABI returns a double */
	.endif
	.endif

	movl	%ecx, %esi
	SHELL_PUSH_HELPER_ARGS
	.if \kind == SHELL_RET_DOUBLE
	call	elt_helper_leave_x87@PLT        /* the result is in st0 */
	.else
	call	elt_helper_leave@PLT
	.endif
	cmpl	%ecx, %esi
	je	2f
	lock incl \clobbered@GOTOFF(%ebx)
	movl	%esi, %ecx              /* keep running: the runtime reports it */
2:	movl	-4(%ebp), %ebx
	.cfi_restore %ebx
	movl	-8(%ebp), %esi
	.cfi_restore %esi
	movl	-12(%ebp), %edi
	.cfi_restore %edi
	leave
	.cfi_def_cfa %esp, 4
	.cfi_restore %ebp
	ret
ELT_END(\name)
.endm

/* void name(void (*method)(void), struct shell_call *call): the method
 * gets the low words of K and both arguments.  C cannot know whether st0
 * holds a result: an empty st0 stores 0.0. */
.macro SHELL_INVOKE name
ELT_ENTRY(\name)
	pushl	%ebp
	.cfi_adjust_cfa_offset 4
	.cfi_rel_offset %ebp, 0
	movl	%esp, %ebp
	.cfi_def_cfa_register %ebp
	pushl	%esi
	.cfi_offset %esi, -12
	movl	12(%ebp), %esi
	subl	$8, %esp                /* 16-aligned after the three pushes */
	pushl	SHELL_CALL_ARGS + 8(%esi)
	pushl	SHELL_CALL_ARGS(%esi)
	pushl	SHELL_CALL_CONTINUATION(%esi)
	call	*8(%ebp)
	movl	%eax, SHELL_CALL_INT_RESULT(%esi)
	movl	%edx, SHELL_CALL_INT_RESULT + 4(%esi)
	movl	%ecx, SHELL_CALL_CONTINUATION_OUT(%esi)
	movl	$0, SHELL_CALL_CONTINUATION_OUT + 4(%esi)
	fxam                            /* an empty st0: C3=1, C2=0, C0=1 */
	fnstsw	%ax
	andw	$0x4500, %ax
	cmpw	$0x4100, %ax
	je	1f
	fstpl	SHELL_CALL_DOUBLE_RESULT(%esi)
	jmp	2f
1:	movl	$0, SHELL_CALL_DOUBLE_RESULT(%esi)
	movl	$0, SHELL_CALL_DOUBLE_RESULT + 4(%esi)
2:	movl	-4(%ebp), %esi
	.cfi_restore %esi
	leave
	.cfi_def_cfa %esp, 4
	.cfi_restore %ebp
	ret
ELT_END(\name)
.endm
