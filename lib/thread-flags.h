/*
 * A thread's flag word, the first member of its TLS block (struct
 * elt_thread_tls in internal.h, which also says the protocol): its
 * values, for C and for the x86-64 System V bodies, which raise and lower
 * it around their call (arch/x86_64/helpers-sysv.S).
 */
#ifndef ELT_THREAD_FLAGS_H
#define ELT_THREAD_FLAGS_H

#define ELT_THREAD_ATTACHED     1       /* the thread's first segment ran */
#define ELT_THREAD_IN_CALLBACK  2       /* plugin code runs on it */
#define ELT_THREAD_UNATTACHABLE 4       /* its last plugin code ran */

#endif
