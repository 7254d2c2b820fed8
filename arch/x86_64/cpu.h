/*
 * x86-64, both ABIs: the vector width the helpers save, and the table of
 * armed helper bodies chosen by it once at load time.  Shared by C and
 * assembly.
 */
#ifndef ELT_X86_64_CPU_H
#define ELT_X86_64_CPU_H

/* How much of each vector register the helpers save. */
#define ELT_X86_64_VEC_SSE      0       /* 16 bytes */
#define ELT_X86_64_VEC_AVX      1       /* 32 bytes */
#define ELT_X86_64_VEC_AVX512   2       /* 64 bytes */
#define ELT_X86_64_VEC_WIDTHS   3

/* Offsets in elt_x86_64_body, the bodies each public helper jumps to when
 * armed.  Win64 has no x87 results: its LEAVE_X87 is its plain Leave. */
#define ELT_X86_64_BODY_ENTER      0
#define ELT_X86_64_BODY_LEAVE      8
#define ELT_X86_64_BODY_LEAVE_X87 16
#define ELT_X86_64_BODY_TAILCALL  24
#define ELT_X86_64_BODY_COUNT      4

#ifndef __ASSEMBLER__
#include "internal.h"

typedef void (*elt_x86_64_body_fn)(void);

/* Defined by the helpers' assembly: the bodies at each width, and the row
 * in use (the SSE row until the constructor in cpu.c runs). */
ELT_HIDDEN extern const elt_x86_64_body_fn
	elt_x86_64_bodies[ELT_X86_64_VEC_WIDTHS][ELT_X86_64_BODY_COUNT];
ELT_HIDDEN extern elt_x86_64_body_fn elt_x86_64_body[ELT_X86_64_BODY_COUNT];

/* What the CPU has, lowered by $ASYNCELT_X86_VECTOR_WIDTH (16, 32 or 64
 * bytes; doc/abi.md) so the tests run every save path on a machine that
 * has them all. */
ELT_HIDDEN unsigned char elt_x86_64_detect_vector_width(void);
#endif

#endif
