/*
 * Instrumented functions for tests, one set per ABI (arch/<arch>/probes.S):
 * the C compiler calls them through function pointers of any prototype, so
 * it places the arguments, and they call the helpers as a JIT's code does.
 */
#ifndef ELT_TESTS_PROBES_H
#define ELT_TESTS_PROBES_H

/* probe_lean_pair's function id (below); the probes include this file. */
#define PROBE_LEAN_ID 0x1234

#ifndef __ASSEMBLER__
#include <stdint.h>

extern uintptr_t probe_function;        /* the id the probes report */
extern void (*probe_target)(void);      /* probe_leave's result comes from it;
                                           probe_tailcall_jump jumps to it */
extern uintptr_t probe_continuation;    /* probe_leave's continuation return */
#if defined(__i386__)
/* i386 only: a callee returning through a hidden pointer pops it (ret $4).
 * When set, probe_enter calls this target (with its own arguments) after
 * Enter to learn how to return; the corpus sets it for struct results. */
extern void (*probe_enter_target)(void);
#endif
/* What the last probe passed as its caller SP, and its return address. */
extern uintptr_t probe_caller_sp;
extern uintptr_t probe_return_address;

/* Enter with the arguments live, then return. */
void probe_enter(void);
extern const char probe_enter_end[];
/* Calls probe_target (with the arguments it was given: a hidden struct
 * return pointer passes through), sets the continuation return register
 * to probe_continuation, runs Leave with all of that live, and returns
 * the target's result. */
void probe_leave(void);
/* Tailcall with the arguments live, then return. */
void probe_tailcall(void);
/* A JIT's tail call: Tailcall with the arguments live, then the frame
 * taken down completely and a jump (not a call) to probe_target, which
 * gets the same register arguments and returns straight to this probe's
 * caller.  Register arguments only: the target must have the caller's
 * prototype, and stack arguments are not forwarded on every ABI. */
void probe_tailcall_jump(void);
/* An empty instrumented function, Enter then Leave; and a function that
 * only returns, on every ABI: the bench's bare call, a leaf without a
 * frame as a JIT compiles an empty method. */
void probe_pair(void);
void probe_bare(void);
/* The same empty function as a JIT compiles it, for the benchmark: the id
 * PROBE_LEAN_ID an immediate, nothing remembered for a test, nothing
 * stored that another thread also writes.  And the same again testing the
 * byte at probe_armed (elt_helpers_armed()) before each hook, skipping
 * the hook's set-up and call while it is 0 (doc/abi.md). */
void probe_lean_pair(void);
void probe_guarded_pair(void);
/* The same with one test at its entry for both hooks: while the byte is
 * clear, a test and a return (a JIT that can run either of two bodies). */
void probe_guarded_once(void);
extern const unsigned char *probe_armed;

/* The probes as a function pointer of any prototype.  Read through a
 * volatile pointer: the compiler must not see that the assembly's
 * declaration differs, which is the point. */
#define PROBE_AS(type, probe) ((type)(probe##_address))
extern void (*volatile probe_enter_address)(void);
extern void (*volatile probe_leave_address)(void);
extern void (*volatile probe_tailcall_address)(void);
extern void (*volatile probe_tailcall_jump_address)(void);

#endif /* __ASSEMBLER__ */

#endif
