/*
 * The helpers instrumented code calls: one set per ABI, all with the same
 * names.  They are not C functions: each takes its inputs in registers
 * chosen so that no argument, return value or continuation is disturbed,
 * and preserves every such register at full width.  doc/abi.md gives, for
 * each ABI, the registers, what is preserved and how a JIT emits the call.
 *
 * A JIT takes their addresses from here:
 *
 *     emit_call(jit, (void *)elt_helper_enter);
 *
 * Calling them from C is undefined.
 */
#ifndef ASYNCELT_HELPERS_H
#define ASYNCELT_HELPERS_H

#include <asyncelt.h>

#ifdef __cplusplus
extern "C" {
#endif

/* At the start of every segment: initial call and each resume.  Called
 * with the arguments (and the continuation argument) live. */
ELT_API void elt_helper_enter(void);
/* At the end of every segment: each suspension (continuation live in the
 * continuation return register) and the final return (result live). */
ELT_API void elt_helper_leave(void);
#if (defined(__x86_64__) && !defined(_WIN32)) || defined(__i386__)
/* x86-64 System V and i386 only: Leave of a function whose result is on
 * the x87 stack (a long double or complex long double; on i386 also a
 * float or double).  It keeps st0/st1; elt_helper_leave does not look
 * there, which saves every other Leave the probe. */
ELT_API void elt_helper_leave_x87(void);
#endif
/* Before a tail call replaces the frame, the callee's arguments live. */
ELT_API void elt_helper_tailcall(void);

/* The byte every helper tests first: nonzero while there is a plugin to
 * call.  Instrumented code may test it itself and skip the helper call
 * while it reads 0, so that idle instrumentation costs a load and a branch
 * instead of a call (doc/abi.md, "Testing the armed byte").  Its address
 * stays the same for the life of the process; read it as a relaxed atomic
 * (a plain byte load in generated code). */
ELT_API const unsigned char *elt_helpers_armed(void);

#ifdef __cplusplus
}
#endif

#endif
