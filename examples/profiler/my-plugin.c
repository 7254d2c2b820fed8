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
 * means Work made 5 calls, 20 resumes, 20 suspends and 5 final returns.
 * A function that does not match makes fini fail, and elt_shutdown() with
 * it.  Its counters are per function, shared by the threads: simple, but
 * each segment is an atomic add on a shared line.  plugins/counting shows
 * the faster per-thread pattern; plugins/check pairs Enter with Leave.
 */
/* Linked into the profiler, not loaded as a module: no entry point. */
#define ELT_PLUGIN_STATIC
#include <asyncelt.h>
#include <asyncelt/plugin.h>

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* One per function: elt_get_function_data() hands it to the callbacks. */
struct function_counts {
	const char *name;
	_Atomic unsigned long kind[ELT_SEGMENT_KIND_COUNT];
	struct function_counts *next;
};

#define MAX_EXPECT 8
struct expectation {
	char name[64];
	unsigned long kind[4];          /* call, resume, suspend, return */
};

struct state {
	pthread_mutex_t lock;           /* guards the list, not the counts */
	struct function_counts *functions;
	struct expectation expect[MAX_EXPECT];
	int nexpect;
};

/* "NAME=C/R/S/T": one option item, as elt_option_next() splits it. */
static elt_status parse_item(struct state *s, const elt_option *opt)
{
	struct expectation *e = &s->expect[s->nexpect];
	char value[128], tail;

	if (s->nexpect == MAX_EXPECT)
		return elt_set_error(ELT_E_BAD_OPTION, "more than %d functions", MAX_EXPECT);
	if (opt->key_len >= sizeof(e->name) || opt->value_len >= sizeof(value))
		return elt_set_error(ELT_E_BAD_OPTION, "\"%.*s\" is too long",
				     (int)opt->key_len, opt->key);
	memcpy(e->name, opt->key, opt->key_len);
	e->name[opt->key_len] = '\0';
	memcpy(value, opt->value, opt->value_len);
	value[opt->value_len] = '\0';
	if (sscanf(value, "%lu/%lu/%lu/%lu%c", &e->kind[0], &e->kind[1],
		   &e->kind[2], &e->kind[3], &tail) != 4)
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
	pthread_mutex_init(&s->lock, NULL);
	while ((st = elt_option_next(&cursor, &opt)) == ELT_OK && opt.key &&
	       (st = parse_item(s, &opt)) == ELT_OK)
		;
	if (st != ELT_OK) {
		pthread_mutex_destroy(&s->lock);
		free(s);
		return st;
	}
	*state = s;
	return ELT_OK;
}

/* Not on the hot path: it may allocate and lock. */
static void *segment_kinds_function_added(void *state, const elt_function_desc *fn)
{
	struct state *s = state;
	struct function_counts *f = calloc(1, sizeof(*f));

	if (!f)
		return NULL;    /* the callbacks then skip this function */
	f->name = fn->name;
	pthread_mutex_lock(&s->lock);
	f->next = s->functions;
	s->functions = f;
	pthread_mutex_unlock(&s->lock);
	return f;
}

/* The hot path, on whichever thread runs the segment: one atomic add.
 * Enter, Leave and Tailcall all count the same way, by segment kind. */
static void segment_kinds_count(const elt_info *info, void *state)
{
	struct function_counts *f = elt_get_function_data(info);

	(void)state;
	if (f)
		atomic_fetch_add_explicit(&f->kind[elt_get_segment_kind(info)], 1,
					  memory_order_relaxed);
}

static struct function_counts *find(struct state *s, const char *name)
{
	struct function_counts *f;

	for (f = s->functions; f; f = f->next)
		if (strcmp(f->name, name) == 0)
			return f;
	return NULL;
}

/* At elt_shutdown(): no segment runs any more, the counts are final. */
static elt_status segment_kinds_fini(void *state)
{
	static const char *const kinds[4] = { "calls", "resumes", "suspends", "returns" };
	struct state *s = state;
	struct function_counts *f, *next;
	int i, k, failed = 0;

	printf("%-12s %8s %8s %8s %8s %9s\n", "function", kinds[0], kinds[1],
	       kinds[2], kinds[3], "tailcalls");
	for (f = s->functions; f; f = f->next)
		printf("%-12s %8lu %8lu %8lu %8lu %9lu\n", f->name,
		       f->kind[ELT_SEGMENT_CALL], f->kind[ELT_SEGMENT_RESUME],
		       f->kind[ELT_SEGMENT_SUSPEND], f->kind[ELT_SEGMENT_RETURN],
		       f->kind[ELT_SEGMENT_TAILCALL]);

	for (i = 0; i < s->nexpect; i++) {
		const struct expectation *e = &s->expect[i];

		f = find(s, e->name);
		for (k = 0; f && k < 4; k++)
			if (f->kind[ELT_SEGMENT_CALL + k] != e->kind[k])
				break;
		printf("%s: %s\n", e->name, !f ? "FAIL (never registered)" :
		       k < 4 ? "FAIL (counts differ)" : "PASS");
		failed |= !f || k < 4;
	}
	fflush(stdout);

	for (f = s->functions; f; f = next) {
		next = f->next;
		free(f);
	}
	pthread_mutex_destroy(&s->lock);
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
	.function_added = segment_kinds_function_added,
	.fini = segment_kinds_fini);
