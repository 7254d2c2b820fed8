/*
 * Fuzz harness for asyncelt-dump's readers (tests/fuzz/fuzz.h): the bytes
 * as a binary recording (dump_parse, then the invocation model and the
 * outputs that format values and draw), and as a Chrome trace (the JSON
 * reader of --svg).  Whatever the bytes, the readers must return an error
 * or a model, never crash, hang or read outside the buffer.  Seeds:
 * tests/fuzz/corpus/dump (a whole recording, one cut short, a Chrome
 * trace); the reader's sources are in FUZZ_SOURCES (Makefile.am).
 */
#include "fuzz.h"
#include "../../tools/dump/output.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static FILE *sink(void)
{
	static FILE *null;

	if (!null)
#if defined(_WIN32)
		null = fopen("NUL", "w");
#else
		null = fopen("/dev/null", "w");
#endif
	return null;
}

FUZZ_HARNESS(dump)
{
	struct dump_file file;
	struct model m;
	char error[512];
	/* a copy the reader may keep pointers into, NUL-ended for the JSON one */
	char *copy = malloc(size + 1);

	if (!copy || !sink()) {
		free(copy);
		return 0;
	}
	memcpy(copy, data, size);
	copy[size] = '\0';
	if (dump_parse(copy, size, "fuzz", &file, error, sizeof(error)) == ELT_OK) {
		struct svg_selection sel = { .top = 50, .width = 400 };

		output_lines(sink(), &file, 1, false);
		output_lines(sink(), &file, 1, true);
		if (model_from_recordings(&m, &file, 1)) {
			output_summary(sink(), &m);
			output_svg(sink(), &m, &sel);
			model_free(&m);
		}
		dump_file_free(&file);
	}
	if (model_from_chrome_trace(&m, copy, size, error, sizeof(error))) {
		struct svg_selection sel = { .top = 50, .width = 400 };

		output_svg(sink(), &m, &sel);
		model_free(&m);
	}
	free(copy);
	return 0;
}
