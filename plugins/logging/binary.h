/*
 * logging's format=binary: compact records (recording.h) for asyncelt-dump
 * to read offline, instead of text made on the instrumented thread.
 */
#ifndef ELT_LOGGING_BINARY_H
#define ELT_LOGGING_BINARY_H

#include <asyncelt.h>

#include <stddef.h>

struct binary_log;

/* The smallest buffer= it takes: a record's fields, a run record's
 * included, always fit, so that every record goes out in one write. */
#define BINARY_MIN_BUFFER 128

/* Opens `path` (%p: the pid) and writes the preamble; ELT_E_BAD_OPTION
 * when `capacity` is below BINARY_MIN_BUFFER. */
elt_status binary_open(struct binary_log **out, const char *path, size_t capacity);
void binary_segment(struct binary_log *log, const elt_info *info);
void binary_function_added(struct binary_log *log, const elt_function_desc *fn);
void binary_thread_exit(struct binary_log *log);
elt_status binary_close(struct binary_log *log);

#endif
