/*
 * The method shell: the code a JIT wraps around an async method's body,
 * written once per ABI as an assembler macro so that a runtime's methods
 * are instances of it rather than hand-written functions.
 *
 *     SHELL_METHOD name, body, kind, clobbered
 *
 * emits a function `name` that
 *   1. calls elt_helper_enter with every argument live (the continuation
 *      K first, then up to SHELL_MAX_ARGS integer or pointer arguments),
 *   2. calls the C function `body` with those same arguments,
 *   3. moves the body's result where the ABI returns it: a suspension puts
 *      the continuation in the continuation return register (and a junk
 *      value in the result register: a suspension has no result); a final
 *      return puts the result in the integer or floating-point return
 *      register (kind SHELL_RET_INT, SHELL_RET_DOUBLE, SHELL_RET_VOID) and
 *      zero in the continuation return register,
 *   4. calls elt_helper_leave with all of that live, and returns.
 * The function id it passes the helpers is its own address.
 *
 * A body is C:
 *     struct shell_int_result body(void *k, <args>);     SHELL_RET_INT
 *     struct shell_double_result body(void *k, <args>);  SHELL_RET_DOUBLE
 *     void *body(void *k, <args>);                       SHELL_RET_VOID
 * returning the continuation (NULL at the final return).  After Leave the
 * shell checks that the continuation return register still holds what it
 * put there, and counts a difference in the unsigned long `clobbered`:
 * the bug the helpers exist to prevent would show there.
 *
 *     SHELL_INVOKE name
 *
 * emits `void name(void (*method)(void), struct shell_call *call)`, the
 * dispatcher's side: C cannot pass a continuation in a register or read
 * the continuation return register after a call, so this loads the
 * arguments from `call`, calls the method, and stores what it returned.
 *
 * One file per ABI (examples/method-shell/<abi>.h), for every ABI that
 * has helpers; this header picks the one for the target by compiler
 * macros.  Shared by C and assembly: the _Static_asserts below
 * check the offsets the assembly uses against struct shell_call.
 */
#ifndef EXAMPLES_METHOD_SHELL_H
#define EXAMPLES_METHOD_SHELL_H

#define SHELL_RET_INT    0
#define SHELL_RET_DOUBLE 1
#define SHELL_RET_VOID   2

/* Arguments after K, each an int32, a pointer or (on 64-bit ABIs) an
 * int64: one register or stack word.  Two, so that K, both and a hidden
 * result pointer still fit the four argument registers of Win64 and arm. */
#define SHELL_MAX_ARGS 2

/* struct shell_call, for the assembly: every field 8 bytes wide. */
#define SHELL_CALL_CONTINUATION     0
#define SHELL_CALL_ARGS             8
#define SHELL_CALL_INT_RESULT       (SHELL_CALL_ARGS + 8 * SHELL_MAX_ARGS)
#define SHELL_CALL_DOUBLE_RESULT    (SHELL_CALL_INT_RESULT + 8)
#define SHELL_CALL_CONTINUATION_OUT (SHELL_CALL_DOUBLE_RESULT + 8)
#define SHELL_CALL_SIZE             (SHELL_CALL_CONTINUATION_OUT + 8)

#if defined(__x86_64__) && !defined(_WIN32) && !defined(__CYGWIN__)
# define SHELL_ABI_FILE "x86_64.h"
#elif defined(__aarch64__) && defined(__AARCH64EL__)
# define SHELL_ABI_FILE "aarch64.h"
#elif defined(__riscv) && defined(__riscv_xlen) && __riscv_xlen == 64 && \
	defined(__riscv_float_abi_double)
# define SHELL_ABI_FILE "riscv64.h"
#elif defined(__powerpc64__) && defined(__LITTLE_ENDIAN__) && defined(_CALL_ELF) && \
	_CALL_ELF == 2
# define SHELL_ABI_FILE "ppc64le.h"
#elif defined(__s390x__)
# define SHELL_ABI_FILE "s390x.h"
#elif defined(__arm__) && !defined(__ARMEB__)
# define SHELL_ABI_FILE "arm.h"
#elif defined(__i386__) && defined(__ELF__)
# define SHELL_ABI_FILE "i386.h"
#elif defined(__x86_64__) && defined(_WIN32)
# define SHELL_ABI_FILE "x86_64-win64.h"
#endif

#ifndef SHELL_ABI_FILE
# error "no method shell for this ABI: write examples/method-shell/<abi>.h"
#endif

#ifdef __ASSEMBLER__
# include SHELL_ABI_FILE
#else
#include <stddef.h>
#include <stdint.h>

struct shell_int_result {
	int64_t value;
	void *continuation;
};

struct shell_double_result {
	double value;
	void *continuation;
};

/* One call of a method through SHELL_INVOKE.  64-bit fields on every ABI
 * so that the assembly has one layout; a 32-bit ABI passes the low half
 * of each argument (the first four bytes: the shells are little-endian or
 * load the low word themselves). */
struct shell_call {
	uint64_t continuation;          /* K: 0 for an initial call */
	uint64_t args[SHELL_MAX_ARGS];
	int64_t int_result;             /* the integer return register */
	double double_result;           /* the floating-point return register */
	uint64_t continuation_out;      /* the continuation return register */
};

_Static_assert(offsetof(struct shell_call, continuation) == SHELL_CALL_CONTINUATION,
	       "SHELL_CALL_CONTINUATION");
_Static_assert(offsetof(struct shell_call, args) == SHELL_CALL_ARGS, "SHELL_CALL_ARGS");
_Static_assert(offsetof(struct shell_call, int_result) == SHELL_CALL_INT_RESULT,
	       "SHELL_CALL_INT_RESULT");
_Static_assert(offsetof(struct shell_call, double_result) == SHELL_CALL_DOUBLE_RESULT,
	       "SHELL_CALL_DOUBLE_RESULT");
_Static_assert(offsetof(struct shell_call, continuation_out) == SHELL_CALL_CONTINUATION_OUT,
	       "SHELL_CALL_CONTINUATION_OUT");
_Static_assert(sizeof(struct shell_call) == SHELL_CALL_SIZE, "SHELL_CALL_SIZE");
#endif

#endif
