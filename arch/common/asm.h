/*
 * Assembler conventions shared by every port: how a helper begins and ends,
 * and the notes every object must carry.  A missing GNU-stack or CET/BTI
 * note on one object silently strips that protection from the whole
 * process, so each .S includes this header and nothing emits them by hand.
 */
#ifndef ELT_ARCH_ASM_H
#define ELT_ARCH_ASM_H

#if defined(__x86_64__) && defined(__CET__) && (__CET__ & 1)
# define ELT_LANDING_PAD endbr64
#elif defined(__aarch64__) && defined(__ARM_FEATURE_BTI_DEFAULT) && \
	__ARM_FEATURE_BTI_DEFAULT
# define ELT_LANDING_PAD bti c
#elif defined(__i386__) && defined(__CET__) && (__CET__ & 1)
# define ELT_LANDING_PAD endbr32
#else
# define ELT_LANDING_PAD
#endif

/* AArch64 return-address signing (-mbranch-protection=pac-ret...): a
 * function that spills x30 signs it first (ELT_SIGN_LR, right after
 * ELT_ENTRY, with SP as it was on entry) and authenticates it back
 * (ELT_AUTH_LR, with the same SP) before returning.  The CFI tells
 * unwinders that x30 is signed in between.  Bit 1 of
 * __ARM_FEATURE_PAC_DEFAULT selects the B key, whose frames the CIE must
 * say so (ELT_KEY_FRAME). */
#if defined(__aarch64__) && defined(__ARM_FEATURE_PAC_DEFAULT) && \
	__ARM_FEATURE_PAC_DEFAULT
# if __ARM_FEATURE_PAC_DEFAULT & 2
#  define ELT_KEY_FRAME .cfi_b_key_frame
#  define ELT_SIGN_LR pacibsp; .cfi_negate_ra_state
#  define ELT_AUTH_LR autibsp; .cfi_negate_ra_state
# else
#  define ELT_KEY_FRAME
#  define ELT_SIGN_LR paciasp; .cfi_negate_ra_state
#  define ELT_AUTH_LR autiasp; .cfi_negate_ra_state
# endif
#else
# define ELT_KEY_FRAME
# define ELT_SIGN_LR
# define ELT_AUTH_LR
#endif

#if defined(__arm__)
/* 32-bit ARM: one source for both instruction sets.  The code is written
 * in unified syntax and assembled in the state the C compiler uses
 * (Thumb-2 on armhf, ARM on armel, where Thumb-1 could not hold it);
 * calls between the two interwork (bl/blx, bx lr, pop {pc}).
 * backtrace() unwinds with the EHABI tables (.ARM.exidx), not DWARF, so
 * every function also carries .fnstart/.fnend and its .save/.pad/.setfp
 * annotations; the .cfi_* directives go to .debug_frame for debuggers,
 * as the C compiler does on this target. */
	.syntax unified
# if defined(__thumb2__)
	.thumb
#  define ELT_FUNCTION_STATE .thumb_func
/* What reading pc yields, relative to the instruction that reads it. */
#  define ELT_ARM_PC_BIAS 4
# else
	.arm
#  define ELT_FUNCTION_STATE
#  define ELT_ARM_PC_BIAS 8
# endif
	.cfi_sections .debug_frame
# define ELT_UNWIND_START .fnstart
# define ELT_UNWIND_END .fnend

/* reg = the address of sym (defined in this module), position-
 * independently: a pc-relative literal beside the code.  ARMv5TE has no
 * movw/movt, and an absolute literal would need a text relocation in a
 * PIE.  Used by the test fixtures and the demo, not the helpers. */
.macro elt_arm_address reg, sym
	ldr	\reg, .Lelt_literal\@
.Lelt_pc\@:
	add	\reg, pc
	b	.Lelt_past\@
	.p2align 2
.Lelt_literal\@:
	.word	\sym - (.Lelt_pc\@ + ELT_ARM_PC_BIAS)
.Lelt_past\@:
.endm
#else
# define ELT_FUNCTION_STATE
# define ELT_UNWIND_START
# define ELT_UNWIND_END
#endif

#if defined(__x86_64__) && (defined(_WIN32) || defined(__CYGWIN__))
/* PE/COFF (Win64): no .type/.size/.hidden (a symbol's type is a COFF
 * .def record), and the unwinder reads SEH tables (.pdata/.xdata), not
 * DWARF CFI: every function is a .seh_proc whose prologue is described
 * by .seh_pushreg/.seh_setframe/.seh_stackalloc up to .seh_endprologue
 * (which each function states itself, a leaf right after ELT_ENTRY). */
# define ELT_ENTRY(sym)                 \
	.globl sym;                     \
	.def sym; .scl 2; .type 32; .endef; \
	.p2align 4;                     \
sym:                                    \
	.seh_proc sym

# define ELT_END(sym)                   \
	.seh_endproc

/* Nothing to hide: a DLL exports only its dllexport symbols. */
# define ELT_LOCAL(sym)
#else
/* An exported helper: global, typed, sized, with CFI (and on ARM the
 * EHABI unwind entry) from its first byte. */
#define ELT_ENTRY(sym)                  \
	.globl sym;                     \
	.type sym, %function;           \
	.p2align 4;                     \
	ELT_FUNCTION_STATE;             \
sym:                                    \
	ELT_UNWIND_START;               \
	.cfi_startproc;                 \
	ELT_KEY_FRAME;                  \
	ELT_LANDING_PAD

#define ELT_END(sym)                    \
	.cfi_endproc;                   \
	ELT_UNWIND_END;                 \
	.size sym, . - sym

/* A hidden variable or function shared with the C half of a port. */
#define ELT_LOCAL(sym) .hidden sym
#endif

/* An entry every segment runs (a helper, its bodies): it starts a cache
 * line of its own, as lib/internal.h's ELT_SEGMENT_PATH functions do. */
#define ELT_SEGMENT_ENTRY(sym)          \
	.p2align 6;                     \
	ELT_ENTRY(sym)

#if defined(__ELF__)
/* No executable stack. */
# define ELT_NOTE_GNU_STACK .section .note.GNU-stack, "", %progbits

/* x86 CET: this object is IBT and SHSTK compatible (every helper starts
 * with endbr64/endbr32 and returns with a plain ret or ret $n), said only
 * when the build asked for CET so the linker can combine it with the C
 * objects.  ELF64 aligns the property array to 8 bytes, ELF32 to 4. */
# if defined(__x86_64__)
#  define ELT_NOTE_ALIGN 3
#  define ELT_NOTE_DESC_SIZE 16
# else
#  define ELT_NOTE_ALIGN 2
#  define ELT_NOTE_DESC_SIZE 12
# endif
# if (defined(__x86_64__) || defined(__i386__)) && defined(__CET__)
#  define ELT_NOTE_PROPERTY                                   \
	.pushsection .note.gnu.property, "a";                \
	.p2align ELT_NOTE_ALIGN;                             \
	.long 4;                /* name size: "GNU\0" */     \
	.long ELT_NOTE_DESC_SIZE; /* descriptor size */      \
	.long 5;                /* NT_GNU_PROPERTY_TYPE_0 */ \
	.asciz "GNU";                                        \
	.long 0xc0000002;       /* X86_FEATURE_1_AND */      \
	.long 4;                                             \
	.long __CET__;          /* 1 = IBT, 2 = SHSTK */     \
	.p2align ELT_NOTE_ALIGN;                             \
	.popsection
/* AArch64: this object is BTI compatible (every helper starts with a
 * landing pad) and, with pac-ret, signs the return addresses it spills:
 * said only when the build asked for it, like the compiler does. */
# elif defined(__aarch64__) && \
	((defined(__ARM_FEATURE_BTI_DEFAULT) && __ARM_FEATURE_BTI_DEFAULT) || \
	 (defined(__ARM_FEATURE_PAC_DEFAULT) && __ARM_FEATURE_PAC_DEFAULT))
#  if defined(__ARM_FEATURE_BTI_DEFAULT) && __ARM_FEATURE_BTI_DEFAULT
#   define ELT_AARCH64_BTI 1
#  else
#   define ELT_AARCH64_BTI 0
#  endif
#  if defined(__ARM_FEATURE_PAC_DEFAULT) && __ARM_FEATURE_PAC_DEFAULT
#   define ELT_AARCH64_PAC 2
#  else
#   define ELT_AARCH64_PAC 0
#  endif
#  define ELT_NOTE_PROPERTY                                   \
	.pushsection .note.gnu.property, "a";                \
	.p2align 3;                                          \
	.long 4;                /* name size: "GNU\0" */     \
	.long 16;               /* descriptor size */        \
	.long 5;                /* NT_GNU_PROPERTY_TYPE_0 */ \
	.asciz "GNU";                                        \
	.long 0xc0000000;       /* AARCH64_FEATURE_1_AND */  \
	.long 4;                                             \
	.long ELT_AARCH64_BTI | ELT_AARCH64_PAC; /* 1 BTI, 2 PAC */ \
	.p2align 3;                                          \
	.popsection
# else
#  define ELT_NOTE_PROPERTY
# endif
#else
# define ELT_NOTE_GNU_STACK
# define ELT_NOTE_PROPERTY
#endif

/* PowerPC64 ELFv2: mark the object (e_flags) as the C compiler does, so
 * the linker never takes it for an ELFv1 object. */
#if defined(__powerpc64__) && defined(_CALL_ELF) && _CALL_ELF == 2
# define ELT_NOTE_ABI .abiversion 2
#else
# define ELT_NOTE_ABI
#endif

#define ELT_OBJECT_NOTES ELT_NOTE_GNU_STACK; ELT_NOTE_PROPERTY; ELT_NOTE_ABI

#endif
