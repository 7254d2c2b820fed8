/*
 * asyncelt-dump's outputs, one file each: the records as text or JSON
 * Lines (lines.c), a Chrome trace (chrome.c), the timing table
 * (summary.c) and the invocation timeline (svg.c).
 */
#ifndef ELT_DUMP_OUTPUT_H
#define ELT_DUMP_OUTPUT_H

#include "model.h"
#include "read.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

void output_lines(FILE *out, struct dump_file *files, size_t n, bool json);
/* Writes to `path` ("-": standard output).  False, with a message on
 * stderr, when it cannot. */
bool output_chrome(const char *path, const struct model *m);
void output_summary(FILE *out, const struct model *m);

struct svg_selection {
	const char *function;           /* only its invocations (and theirs) */
	uint64_t from_ns, to_ns;        /* a time window; to_ns 0: to the end */
	uint32_t top;                   /* at most this many rows */
	unsigned width;                 /* pixels of the time axis */
};
void output_svg(FILE *out, const struct model *m, const struct svg_selection *sel);

/* A timing:trace= Chrome trace file into a model.  False, with a message
 * naming the problem, when it is not one. */
bool model_from_chrome_trace(struct model *m, const char *text, size_t size,
			     char *error, size_t error_size);

#endif
