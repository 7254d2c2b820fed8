/*
 * histogram: a first profiler plugin, cut down from plugins/counting.
 * For every function it counts the segments of each kind (calls, resumes,
 * suspends, returns, tailcalls) and prints one row per function at exit.
 *
 * Its options say what to expect, one function each, the four counts
 * separated by '/':
 *
 *     Work=5/20/20/5,WorkVoid=1/2/2/1
 *
 * means Work made 5 calls, 20 resumes, 20 suspends and 5 final returns.
 * A function that does not match makes fini fail, and elt_shutdown() with
 * it.  What counting does beyond this (pairing Enter with Leave, matching
 * each resume to its suspension) is left out.
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
struct histogram {
	const char *name;
	_Atomic unsigned long kind[ELT_SEGMENT_KIND_COUNT];
	struct histogram *next;
};

#define MAX_EXPECT 8
struct expectation {
	char name[64];
	unsigned long kind[4];          /* call, resume, suspend, return */
};

struct state {
	pthread_mutex_t lock;           /* guards the list, not the counts */
	struct histogram *functions;
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

static elt_status histogram_init(const char *options, void **state)
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
static void *histogram_function_added(void *state, const elt_function_desc *fn)
{
	struct state *s = state;
	struct histogram *h = calloc(1, sizeof(*h));

	if (!h)
		return NULL;    /* the callbacks then skip this function */
	h->name = fn->name;
	pthread_mutex_lock(&s->lock);
	h->next = s->functions;
	s->functions = h;
	pthread_mutex_unlock(&s->lock);
	return h;
}

/* The hot path, on whichever thread runs the segment: one atomic add.
 * Enter, Leave and Tailcall all count the same way, by segment kind. */
static void histogram_count(const elt_info *info, void *state)
{
	struct histogram *h = elt_get_function_data(info);

	(void)state;
	if (h)
		atomic_fetch_add_explicit(&h->kind[elt_get_segment_kind(info)], 1,
					  memory_order_relaxed);
}

static struct histogram *find(struct state *s, const char *name)
{
	struct histogram *h;

	for (h = s->functions; h; h = h->next)
		if (strcmp(h->name, name) == 0)
			return h;
	return NULL;
}

/* At elt_shutdown(): no segment runs any more, the counts are final. */
static elt_status histogram_fini(void *state)
{
	static const char *const kinds[4] = { "calls", "resumes", "suspends", "returns" };
	struct state *s = state;
	struct histogram *h, *next;
	int i, k, failed = 0;

	printf("%-12s %8s %8s %8s %8s %9s\n", "function", kinds[0], kinds[1],
	       kinds[2], kinds[3], "tailcalls");
	for (h = s->functions; h; h = h->next)
		printf("%-12s %8lu %8lu %8lu %8lu %9lu\n", h->name,
		       h->kind[ELT_SEGMENT_CALL], h->kind[ELT_SEGMENT_RESUME],
		       h->kind[ELT_SEGMENT_SUSPEND], h->kind[ELT_SEGMENT_RETURN],
		       h->kind[ELT_SEGMENT_TAILCALL]);

	for (i = 0; i < s->nexpect; i++) {
		const struct expectation *e = &s->expect[i];

		h = find(s, e->name);
		for (k = 0; h && k < 4; k++)
			if (h->kind[ELT_SEGMENT_CALL + k] != e->kind[k])
				break;
		printf("%s: %s\n", e->name, !h ? "FAIL (never registered)" :
		       k < 4 ? "FAIL (counts differ)" : "PASS");
		failed |= !h || k < 4;
	}
	fflush(stdout);

	for (h = s->functions; h; h = next) {
		next = h->next;
		free(h);
	}
	pthread_mutex_destroy(&s->lock);
	free(s);
	return failed ? ELT_E_CHECK_FAILED : ELT_OK;
}

/* Defines `elt_plugin_histogram`, which profiler.c adds. */
ELT_PLUGIN_DEFINE(histogram,
	.description = "segments per function, by kind",
	.init = histogram_init,
	.enter = histogram_count,
	.leave = histogram_count,
	.tailcall = histogram_count,
	.function_added = histogram_function_added,
	.fini = histogram_fini);
