/*
 * counting: the plugin to copy.  Counts each function's segments by kind
 * and prints a table at exit (ASYNCELT_PLUGINS='counting:output=FILE').
 * Each thread counts in its own function storage (the library's, one row
 * per function per thread): no lock, no atomic, no shared cache line per
 * segment.  fini sums every thread's rows.  Whether segments pair is
 * plugins/check's question.
 */
#include <asyncelt.h>
#include <asyncelt/plugin.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

extern const elt_plugin elt_plugin_counting;    /* fini reads its storage */

static void count(const elt_info *info, void *state)
{
	uint64_t *mine = elt_get_function_storage(info);

	(void)state;
	if (mine)       /* else out of memory: this segment goes uncounted */
		mine[elt_get_segment_kind(info)]++;
}

static elt_status counting_init(const char *options, void **state)
{
	FILE *f = NULL;
	elt_status st;
	elt_option opt;
	char path[4096] = "";

	/* The file is opened, and so emptied, once every option is known
	 * good: a refused spec leaves it as it was. */
	while ((st = elt_option_next(&options, &opt)) == ELT_OK && opt.key) {
		if (elt_option_is(&opt, "output"))
			st = elt_option_copy(&opt, path, sizeof(path));
		else
			st = elt_set_error(ELT_E_BAD_OPTION, "unknown option \"%.*s\" (known: output)",
					   (int)opt.key_len, opt.key);
		if (st != ELT_OK)
			break;
	}
	if (st == ELT_OK && *path && !(f = fopen(path, "w")))
		st = elt_set_error(ELT_E_IO, "output: cannot write %s: %s", path, strerror(errno));
	*state = st == ELT_OK ? (f ? f : stderr) : NULL;
	return st;
}

/* One function's line: every thread's row, summed. */
static void report(const elt_function_desc *fn, void *const *rows, size_t nrows, void *out)
{
	uint64_t n[ELT_SEGMENT_KIND_COUNT] = { 0 }, any = 0;
	size_t i;
	int k;

	for (i = 0; i < nrows; i++)
		for (k = 0; k < ELT_SEGMENT_KIND_COUNT; k++)
			n[k] += ((const uint64_t *)rows[i])[k];
	for (k = 0; k < ELT_SEGMENT_KIND_COUNT; k++)
		any |= n[k];
	if (any)
		fprintf(out, "%-24s %7llu %7llu %8llu %7llu %9llu\n",
			fn ? fn->name : "(unregistered)", (unsigned long long)n[ELT_SEGMENT_CALL],
			(unsigned long long)n[ELT_SEGMENT_RESUME],
			(unsigned long long)n[ELT_SEGMENT_SUSPEND],
			(unsigned long long)n[ELT_SEGMENT_RETURN],
			(unsigned long long)n[ELT_SEGMENT_TAILCALL]);
}

static elt_status counting_fini(void *out)
{
	FILE *f = out;
	int failed;

	fprintf(f, "asyncelt counting report\n%-24s %7s %7s %8s %7s %9s\n", "function",
		"calls", "resumes", "suspends", "returns", "tailcalls");
	elt_foreach_function_storage(&elt_plugin_counting, report, f);
	/* A full disk shows at the flush, or earlier, in the error flag. */
	failed = fflush(f) != 0 || ferror(f);
	if (f != stderr)
		failed |= fclose(f) != 0;
	/* The library reports it, naming the plugin. */
	return failed ? elt_set_error(ELT_E_IO, "the report could not be written: %s",
				      strerror(errno)) : ELT_OK;
}

ELT_PLUGIN_DEFINE(counting,
	.description = "counts segments per function, per thread, summed at exit",
	.init = counting_init, .enter = count, .leave = count, .tailcall = count,
	.fini = counting_fini,
	.function_storage = ELT_SEGMENT_KIND_COUNT * sizeof(uint64_t),
	/* It never asks for invocations: none are stitched for it alone;
	 * and its integers leave the FP control state alone. */
	.flags = ELT_PLUGIN_NO_INVOCATIONS | ELT_PLUGIN_NO_FLOAT);
