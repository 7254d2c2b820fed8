/*
 * segment_kinds: a first profiler plugin.  For every function it counts
 * the segments of each kind (calls, resumes, suspends, returns, tailcalls)
 * and prints one row per function at exit.
 *
 * Its options say what to expect, one function each, the four counts
 * separated by '/':
 *
 *     Work=5/20/20/5,WorkVoid=1/2/2/1
 *
 * means Work made 5 calls, 20 resumes, 20 suspends and 5 final returns
 * (a name is a key: letters, digits, '_', '-' and '.').
 * A function that does not match makes fini fail, and elt_shutdown() with
 * it.  Each thread counts in its own row per function, which the library
 * keeps (function_storage): no lock and no atomic per segment.  fini sums
 * the rows.  plugins/check pairs Enter with Leave.
 */
/* Linked into the profiler, not loaded as a module: no entry point. */
#define ELT_PLUGIN_STATIC
#include <asyncelt.h>
#include <asyncelt/plugin.h>

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

extern const elt_plugin elt_plugin_segment_kinds;       /* fini reads its rows */

/* A thread's row for a function: the library keeps one per thread. */
struct counts {
	uint64_t kind[ELT_SEGMENT_KIND_COUNT];  /* 64 bits on every ABI */
};

#define MAX_EXPECT 8
struct expectation {
	char name[64];
	unsigned long kind[4];          /* call, resume, suspend, return */
	enum { NOT_SEEN, PASSED, FAILED } verdict;      /* fini's */
};

struct state {
	struct expectation expect[MAX_EXPECT];
	int nexpect;
};

/* One count of "C/R/S/T": digits only (strtoul alone would take "-1",
 * a sign or spaces), then `sep`.  Returns where it stopped, or NULL. */
static const char *parse_count(const char *p, char sep, unsigned long *out)
{
	char *end;

	if (*p < '0' || *p > '9')
		return NULL;
	errno = 0;
	*out = strtoul(p, &end, 10);
	if (errno == ERANGE || *end != sep)
		return NULL;
	return end + (sep != '\0');
}

/* "NAME=C/R/S/T": one option item, as elt_option_next() splits it. */
static elt_status parse_item(struct state *s, const elt_option *opt)
{
	struct expectation *e = &s->expect[s->nexpect];
	char value[128];
	const char *p = value;
	int i;

	if (s->nexpect == MAX_EXPECT)
		return elt_set_error(ELT_E_BAD_OPTION, "more than %d functions", MAX_EXPECT);
	if (opt->key_len >= sizeof(e->name) || opt->value_len >= sizeof(value))
		return elt_set_error(ELT_E_BAD_OPTION, "\"%.*s\" is too long",
				     (int)opt->key_len, opt->key);
	memcpy(e->name, opt->key, opt->key_len);
	e->name[opt->key_len] = '\0';
	memcpy(value, opt->value, opt->value_len);
	value[opt->value_len] = '\0';
	for (i = 0; i < 4 && p; i++)
		p = parse_count(p, i < 3 ? '/' : '\0', &e->kind[i]);
	if (!p)
		return elt_set_error(ELT_E_BAD_OPTION, "%s=%s: want CALLS/RESUMES/SUSPENDS/RETURNS",
				     e->name, value);
	s->nexpect++;
	return ELT_OK;
}

static elt_status segment_kinds_init(const char *options, void **state)
{
	struct state *s = calloc(1, sizeof(*s));
	const char *cursor = options;
	elt_option opt;
	elt_status st;

	if (!s)
		return elt_set_error(ELT_E_NO_MEMORY, "out of memory");
	while ((st = elt_option_next(&cursor, &opt)) == ELT_OK && opt.key &&
	       (st = parse_item(s, &opt)) == ELT_OK)
		;
	if (st != ELT_OK) {
		free(s);
		return st;
	}
	*state = s;
	return ELT_OK;
}

/* The hot path, on whichever thread runs the segment: one add to that
 * thread's own row.  Enter, Leave and Tailcall all count the same way, by
 * segment kind. */
static void segment_kinds_count(const elt_info *info, void *state)
{
	struct counts *mine = elt_get_function_storage(info);

	(void)state;
	if (mine)       /* NULL only when out of memory */
		mine->kind[elt_get_segment_kind(info)]++;
}

/* From fini, once per function: every thread's row summed, printed, and
 * compared with what the options expect. */
static void report(const elt_function_desc *fn, void *const *rows, size_t nrows, void *state)
{
	struct state *s = state;
	struct counts total = { { 0 } };
	size_t i;
	int k, e;

	if (!fn)
		return;         /* unregistered ids: not counted here */
	for (i = 0; i < nrows; i++)
		for (k = 0; k < ELT_SEGMENT_KIND_COUNT; k++)
			total.kind[k] += ((const struct counts *)rows[i])->kind[k];
	printf("%-12s %8" PRIu64 " %8" PRIu64 " %8" PRIu64 " %8" PRIu64 " %9" PRIu64 "\n",
	       fn->name,
	       total.kind[ELT_SEGMENT_CALL], total.kind[ELT_SEGMENT_RESUME],
	       total.kind[ELT_SEGMENT_SUSPEND], total.kind[ELT_SEGMENT_RETURN],
	       total.kind[ELT_SEGMENT_TAILCALL]);
	for (e = 0; e < s->nexpect; e++)
		if (strcmp(s->expect[e].name, fn->name) == 0) {
			for (k = 0; k < 4; k++)
				if (total.kind[ELT_SEGMENT_CALL + k] != s->expect[e].kind[k])
					break;
			s->expect[e].verdict = k < 4 ? FAILED : PASSED;
		}
}

/* At elt_shutdown(): no segment runs any more, the rows are final. */
static elt_status segment_kinds_fini(void *state)
{
	static const char *const verdict[] = { "FAIL (never registered)", "PASS",
					       "FAIL (counts differ)" };
	struct state *s = state;
	int e, failed = 0;

	printf("%-12s %8s %8s %8s %8s %9s\n", "function", "calls", "resumes", "suspends",
	       "returns", "tailcalls");
	elt_foreach_function_storage(&elt_plugin_segment_kinds, report, s);
	for (e = 0; e < s->nexpect; e++) {
		printf("%s: %s\n", s->expect[e].name, verdict[s->expect[e].verdict]);
		failed |= s->expect[e].verdict != PASSED;
	}
	fflush(stdout);
	free(s);
	return failed ? ELT_E_CHECK_FAILED : ELT_OK;
}

/* Defines `elt_plugin_segment_kinds`, which profiler.c adds. */
ELT_PLUGIN_DEFINE(segment_kinds,
	.description = "segments per function, by kind",
	.init = segment_kinds_init,
	.enter = segment_kinds_count,
	.leave = segment_kinds_count,
	.tailcall = segment_kinds_count,
	.function_storage = sizeof(struct counts),
	.fini = segment_kinds_fini,
	/* What makes it cheap: it never asks for a logical invocation, so
	 * none is stitched for it, and its integers leave the FP control
	 * state alone, so the helpers skip saving it (plugins.md). */
	.flags = ELT_PLUGIN_NO_INVOCATIONS | ELT_PLUGIN_NO_FLOAT);
