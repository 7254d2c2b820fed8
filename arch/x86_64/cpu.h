/*
 * x86-64, both ABIs: the widest vector state the CPU has and the OS saves,
 * as the helpers save it.  0, 1, 2: the ELT_X86_64_VEC_* values of
 * frame.h and frame-win64.h.
 */
#ifndef ELT_X86_64_CPU_H
#define ELT_X86_64_CPU_H

#include "internal.h"

/* What the CPU has, lowered by $ASYNCELT_X86_VECTOR_WIDTH (16, 32 or 64
 * bytes; doc/abi.md) so the tests run every save path on a machine that
 * has them all. */
ELT_HIDDEN unsigned char elt_x86_64_detect_vector_width(void);

#endif
