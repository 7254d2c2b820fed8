/*
 * x86-64, both ABIs: the FP control state is the instrumented code's,
 * whatever a plugin did (doc/abi.md).  MXCSR whole (its control bits and
 * the status flags the code had) and the x87 control word, read before
 * the plugins at these offsets from %rsp and, since reading is cheap and
 * loading is not, reloaded only when a plugin changed them.  SCRATCH: four
 * bytes the comparison may use.
 *
 * Reading costs too: while every plugin says ELT_PLUGIN_NO_FLOAT
 * (ELT_PLUGINS_FLOAT clear, plugin-state.h) the helpers do neither and
 * call the _nofloat dispatchers, which run no plugin that could change
 * the state; otherwise they use these macros out of line, after their
 * return.  Assembly only.
 */
#ifndef ELT_X86_64_FP_CONTROL_H
#define ELT_X86_64_FP_CONTROL_H

.macro SAVE_FP_CONTROL mxcsr, fcw
	stmxcsr	\mxcsr(%rsp)
	fnstcw	\fcw(%rsp)
.endm

.macro RESTORE_FP_CONTROL mxcsr, fcw, scratch
	stmxcsr	\scratch(%rsp)
	movl	\scratch(%rsp), %eax
	cmpl	\mxcsr(%rsp), %eax
	je	.Lmxcsr_kept\@
	ldmxcsr	\mxcsr(%rsp)
.Lmxcsr_kept\@:
	fnstcw	\scratch(%rsp)
	movzwl	\scratch(%rsp), %eax
	cmpw	\fcw(%rsp), %ax
	je	.Lfcw_kept\@
	fldcw	\fcw(%rsp)
.Lfcw_kept\@:
.endm

#endif
