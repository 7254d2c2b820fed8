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
#elif defined(__i386__) && defined(__CET__) && (__CET__ & 1)
# define ELT_LANDING_PAD endbr32
#else
# define ELT_LANDING_PAD
#endif

/* An exported helper: global, typed, sized, with CFI from its first byte. */
#define ELT_ENTRY(sym)                  \
	.globl sym;                     \
	.type sym, %function;           \
	.p2align 4;                     \
sym:                                    \
	.cfi_startproc;                 \
	ELT_LANDING_PAD

#define ELT_END(sym)                    \
	.cfi_endproc;                   \
	.size sym, . - sym

/* A hidden variable or function shared with the C half of a port. */
#define ELT_LOCAL(sym) .hidden sym

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
# else
#  define ELT_NOTE_PROPERTY
# endif
#else
# define ELT_NOTE_GNU_STACK
# define ELT_NOTE_PROPERTY
#endif

#define ELT_OBJECT_NOTES ELT_NOTE_GNU_STACK; ELT_NOTE_PROPERTY

#endif
