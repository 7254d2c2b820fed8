/*
 * counting: the template plugin.  Counts every function's segments by
 * kind, checks that Enter and Leave pair up (even when a method resumes on
 * another thread), and prints a table at exit.  With expect=NAME:N,...
 * it checks that each named function made exactly N Enter/Leave pairs with
 * no sequence error, prints PASS or FAIL, and fails the process on FAIL.
 *
 *     ASYNCELT_PLUGINS='counting:expect=Work:25,WorkVoid:3,output=counts.txt'
 *
 * To write your own plugin, copy this file: init parses the options,
 * function_added sets up per-function data (it may allocate: it is not on
 * the hot path), the segment callbacks only do atomic arithmetic, fini
 * reports.
 */
#include <asyncelt.h>
#include <asyncelt/plugin.h>

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Per function, updated by any thread with relaxed atomics. */
struct counts {
	const char *name;
	_Atomic uint64_t kind[ELT_SEGMENT_KIND_COUNT];
	_Atomic long depth;             /* its segments running right now */
	_Atomic uint64_t errors;        /* sequence errors seen in it */
	struct counts *next;
};

/* Sequence errors, by what went wrong. */
enum problem {
	LEAVE_WITHOUT_ENTER,    /* a Leave while none of its segments runs */
	DOUBLE_SUSPEND,         /* a continuation suspended twice, no resume between */
	RESUME_UNSUSPENDED,     /* a continuation resumed twice, or never suspended */
	PROBLEM_COUNT
};

static const char *const problem_text[PROBLEM_COUNT] = {
	"Leave or Tailcall with no Enter of that function running",
	"continuation suspended twice without a resume",
	"continuation resumed without a suspension",
};

/*
 * Suspensions waiting for their resume, keyed by continuation.  A resume
 * may be seen before the suspending thread has finished its Leave, so each
 * continuation keeps a balance (+1 per suspend, -1 per resume) that must
 * stay within -1..1 and end at 0.  Open addressing; keys are never removed
 * (a continuation address reused later finds its slot at balance 0), and
 * a probe gives up after MAX_PROBES slots: a continuation that finds no
 * room is counted as untracked rather than slowing every segment down.
 */
#define SUSPENDED_BITS 16
#define SUSPENDED_SLOTS (1u << SUSPENDED_BITS)
#define MAX_PROBES 64
struct suspended_slot {
	_Atomic uintptr_t continuation;
	_Atomic long balance;
};

struct expectation {
	char name[64];
	unsigned long pairs;
};

struct counting {
	FILE *out;
	int close_out;
	struct expectation *expect;
	size_t nexpect;
	pthread_mutex_t lock;           /* the function list, only */
	struct counts *functions;       /* in the order we learned of them */
	struct counts **tail;
	struct counts unregistered;
	_Atomic uint64_t problems[PROBLEM_COUNT];
	_Atomic uint64_t untracked;     /* continuations the table had no room for */
	struct suspended_slot *suspended;
};

/* --- options ------------------------------------------------------------- */

static elt_status parse_expect(struct counting *c, const char *v, size_t len)
{
	while (len) {
		size_t item = strcspn(v, ",");
		const char *colon = memchr(v, ':', item < len ? item : len);
		struct expectation *e;
		char *end;

		if (item > len)
			item = len;
		if (!colon || colon == v)
			return elt_set_error(ELT_E_BAD_OPTION,
					     "expect: \"%.*s\" is not NAME:PAIRS", (int)item, v);
		if ((size_t)(colon - v) >= sizeof(e->name))
			return elt_set_error(ELT_E_BAD_OPTION,
					     "expect: the name \"%.*s\" is longer than %zu bytes",
					     (int)(colon - v), v, sizeof(e->name) - 1);
		e = realloc(c->expect, (c->nexpect + 1) * sizeof(*e));
		if (!e)
			return elt_set_error(ELT_E_NO_MEMORY, "out of memory");
		c->expect = e;
		e += c->nexpect;
		memcpy(e->name, v, (size_t)(colon - v));
		e->name[colon - v] = '\0';
		errno = 0;
		e->pairs = strtoul(colon + 1, &end, 10);
		if (end != v + item || colon[1] < '0' || colon[1] > '9' || errno)
			return elt_set_error(ELT_E_BAD_OPTION,
					     "expect: \"%.*s\": PAIRS must be a decimal number",
					     (int)item, v);
		c->nexpect++;
		v += item;
		len -= item;
		if (len) {      /* skip the ',' */
			v++;
			len--;
		}
	}
	return ELT_OK;
}

static elt_status parse_options(struct counting *c, const char *options)
{
	const char *cursor = options;
	elt_option opt;
	elt_status st;

	while ((st = elt_option_next(&cursor, &opt)) == ELT_OK && opt.key) {
		if (elt_option_is(&opt, "expect")) {
			st = parse_expect(c, opt.value, opt.value_len);
		} else if (elt_option_is(&opt, "output")) {
			char path[4096];

			snprintf(path, sizeof(path), "%.*s", (int)opt.value_len, opt.value);
			if (c->close_out)
				return elt_set_error(ELT_E_BAD_OPTION, "output given twice");
			c->out = fopen(path, "w");
			if (!c->out)
				return elt_set_error(ELT_E_IO, "output: cannot write %s: %s",
						     path, strerror(errno));
			c->close_out = 1;
		} else {
			return elt_set_error(ELT_E_BAD_OPTION,
					     "unknown option \"%.*s\" (known: expect, output)",
					     (int)opt.key_len, opt.key);
		}
		if (st != ELT_OK)
			return st;
	}
	return st;
}

static elt_status counting_init(const char *options, void **state)
{
	struct counting *c = calloc(1, sizeof(*c));
	elt_status st;

	if (!c)
		return elt_set_error(ELT_E_NO_MEMORY, "out of memory");
	pthread_mutex_init(&c->lock, NULL);
	c->tail = &c->functions;
	c->unregistered.name = "(unregistered)";
	c->out = stderr;
	c->suspended = calloc(SUSPENDED_SLOTS, sizeof(*c->suspended));
	st = c->suspended ? parse_options(c, options)
			  : elt_set_error(ELT_E_NO_MEMORY, "out of memory");
	if (st != ELT_OK) {
		if (c->close_out)
			fclose(c->out);
		free(c->expect);
		free(c->suspended);
		free(c);
		return st;
	}
	*state = c;
	return ELT_OK;
}

/* --- per function (cold: may allocate and lock) -------------------------- */

static void *counting_function_added(void *state, const elt_function_desc *fn)
{
	struct counting *c = state;
	struct counts *f = calloc(1, sizeof(*f));

	if (!f)
		return NULL;    /* its segments count as unregistered */
	f->name = fn->name;
	pthread_mutex_lock(&c->lock);
	*c->tail = f;
	c->tail = &f->next;
	pthread_mutex_unlock(&c->lock);
	return f;
}

/* --- the hot path: atomics only ------------------------------------------ */

static void problem(struct counting *c, struct counts *f, enum problem p)
{
	atomic_fetch_add_explicit(&c->problems[p], 1, memory_order_relaxed);
	atomic_fetch_add_explicit(&f->errors, 1, memory_order_relaxed);
}

/* Adds `delta` to the continuation's balance; returns the new balance, or
 * 0 when the table is full. */
static long balance(struct counting *c, uintptr_t k, long delta)
{
	/* the high bits of the product depend on every bit of the address */
	unsigned i = (unsigned)(((uint64_t)k * 0x9e3779b97f4a7c15ull) >> (64 - SUSPENDED_BITS));
	unsigned probes;

	for (probes = 0; probes < MAX_PROBES; probes++) {
		struct suspended_slot *s = &c->suspended[i];
		uintptr_t seen = atomic_load_explicit(&s->continuation, memory_order_acquire);

		if (seen == 0 &&
		    atomic_compare_exchange_strong(&s->continuation, &seen, k))
			seen = k;
		if (seen == k)
			return atomic_fetch_add(&s->balance, delta) + delta;
		i = (i + 1) & (SUSPENDED_SLOTS - 1);
	}
	atomic_fetch_add_explicit(&c->untracked, 1, memory_order_relaxed);
	return 0;
}

static struct counts *counts_of(struct counting *c, const elt_info *info)
{
	struct counts *f = elt_get_function_data(info);

	return f ? f : &c->unregistered;
}

static void count(struct counts *f, elt_segment_kind kind)
{
	atomic_fetch_add_explicit(&f->kind[kind], 1, memory_order_relaxed);
}

static void counting_enter(const elt_info *info, void *state)
{
	struct counting *c = state;
	struct counts *f = counts_of(c, info);
	elt_segment_kind kind = elt_get_segment_kind(info);
	void *k = NULL;

	count(f, kind);
	atomic_fetch_add_explicit(&f->depth, 1, memory_order_relaxed);
	if (kind == ELT_SEGMENT_RESUME) {
		elt_get_continuation(info, &k);
		if (balance(c, (uintptr_t)k, -1) < -1)
			problem(c, f, RESUME_UNSUSPENDED);
	}
}

static void counting_leave(const elt_info *info, void *state)
{
	struct counting *c = state;
	struct counts *f = counts_of(c, info);
	elt_segment_kind kind = elt_get_segment_kind(info);
	void *k = NULL;

	count(f, kind);
	if (atomic_fetch_sub_explicit(&f->depth, 1, memory_order_relaxed) <= 0) {
		atomic_fetch_add_explicit(&f->depth, 1, memory_order_relaxed);
		problem(c, f, LEAVE_WITHOUT_ENTER);
	}
	if (kind == ELT_SEGMENT_SUSPEND) {
		elt_get_continuation(info, &k);
		if (balance(c, (uintptr_t)k, +1) > 1)
			problem(c, f, DOUBLE_SUSPEND);
	}
}

static void counting_tailcall(const elt_info *info, void *state)
{
	struct counting *c = state;
	struct counts *f = counts_of(c, info);

	/* The frame is replaced: its segment ends here. */
	count(f, ELT_SEGMENT_TAILCALL);
	if (atomic_fetch_sub_explicit(&f->depth, 1, memory_order_relaxed) <= 0) {
		atomic_fetch_add_explicit(&f->depth, 1, memory_order_relaxed);
		problem(c, f, LEAVE_WITHOUT_ENTER);
	}
}

/* --- the report ---------------------------------------------------------- */

#define LOAD(x) atomic_load_explicit(&(x), memory_order_relaxed)

static uint64_t enters(struct counts *f)
{
	return LOAD(f->kind[ELT_SEGMENT_CALL]) + LOAD(f->kind[ELT_SEGMENT_RESUME]);
}

static uint64_t leaves(struct counts *f)
{
	return LOAD(f->kind[ELT_SEGMENT_SUSPEND]) + LOAD(f->kind[ELT_SEGMENT_RETURN]) +
	       LOAD(f->kind[ELT_SEGMENT_TAILCALL]);
}

static void print_row(FILE *out, struct counts *f)
{
	fprintf(out, "%-24s %7llu %7llu %8llu %7llu %9llu %7llu %7llu %5ld %6llu\n",
		f->name,
		(unsigned long long)LOAD(f->kind[ELT_SEGMENT_CALL]),
		(unsigned long long)LOAD(f->kind[ELT_SEGMENT_RESUME]),
		(unsigned long long)LOAD(f->kind[ELT_SEGMENT_SUSPEND]),
		(unsigned long long)LOAD(f->kind[ELT_SEGMENT_RETURN]),
		(unsigned long long)LOAD(f->kind[ELT_SEGMENT_TAILCALL]),
		(unsigned long long)enters(f), (unsigned long long)leaves(f),
		LOAD(f->depth), (unsigned long long)LOAD(f->errors));
}

static struct counts *find(struct counting *c, const char *name)
{
	struct counts *f;

	for (f = c->functions; f; f = f->next)
		if (strcmp(f->name, name) == 0)
			return f;
	return NULL;
}

/* Checks one expectation; prints its verdict; returns 1 when met. */
static int check(struct counting *c, const struct expectation *e)
{
	struct counts *f = find(c, e->name);
	char why[160] = "";

	if (!f)
		snprintf(why, sizeof(why), "never registered");
	else if (enters(f) != e->pairs || leaves(f) != e->pairs)
		snprintf(why, sizeof(why), "%llu Enter and %llu Leave callbacks, want %lu of each",
			 (unsigned long long)enters(f), (unsigned long long)leaves(f), e->pairs);
	else if (LOAD(f->depth) != 0)
		snprintf(why, sizeof(why), "depth %ld at exit, want 0", LOAD(f->depth));
	else if (LOAD(f->errors))
		snprintf(why, sizeof(why), "%llu sequence errors",
			 (unsigned long long)LOAD(f->errors));
	fprintf(c->out, "expect %s: %lu pairs: %s%s%s\n", e->name, e->pairs,
		*why ? "FAIL (" : "PASS", why, *why ? ")" : "");
	return !*why;
}

static elt_status counting_fini(void *state)
{
	struct counting *c = state;
	struct counts *f, *next;
	unsigned long long open = 0, early = 0, problems = 0;
	size_t i, met = 0;
	int p, failed = 0;

	fprintf(c->out, "asyncelt counting report\n");
	fprintf(c->out, "%-24s %7s %7s %8s %7s %9s %7s %7s %5s %6s\n", "function",
		"calls", "resumes", "suspends", "returns", "tailcalls", "enters",
		"leaves", "depth", "errors");
	for (f = c->functions; f; f = f->next)
		print_row(c->out, f);
	if (enters(&c->unregistered) || leaves(&c->unregistered))
		print_row(c->out, &c->unregistered);

	for (i = 0; i < SUSPENDED_SLOTS; i++) {
		long b = LOAD(c->suspended[i].balance);

		open += b > 0;
		early += b < 0;
	}
	if (open)
		fprintf(c->out, "suspended and never resumed: %llu\n", open);
	if (early)
		fprintf(c->out, "resumed and never suspended: %llu\n", early);
	for (p = 0; p < PROBLEM_COUNT; p++)
		problems += LOAD(c->problems[p]);
	for (p = 0; p < PROBLEM_COUNT; p++)
		if (LOAD(c->problems[p]))
			fprintf(c->out, "sequence error: %s: %llu\n", problem_text[p],
				(unsigned long long)LOAD(c->problems[p]));
	if (LOAD(c->untracked))
		fprintf(c->out, "continuations not tracked (table full): %llu\n",
			(unsigned long long)LOAD(c->untracked));

	for (i = 0; i < c->nexpect; i++)
		met += check(c, &c->expect[i]);
	if (c->nexpect) {
		int pass = met == c->nexpect && !early && !problems;

		fprintf(c->out, "counting: %s (%zu of %zu expectations met)\n",
			pass ? "PASS" : "FAIL", met, c->nexpect);
		failed = !pass;
	}
	fflush(c->out);

	if (c->close_out)
		fclose(c->out);
	for (f = c->functions; f; f = next) {
		next = f->next;
		free(f);
	}
	free(c->expect);
	free(c->suspended);
	pthread_mutex_destroy(&c->lock);
	free(c);
	return failed ? ELT_E_CHECK_FAILED : ELT_OK;
}

ELT_PLUGIN_DEFINE(counting,
	.description = "counts segments per function and checks that they pair",
	.init = counting_init,
	.enter = counting_enter,
	.leave = counting_leave,
	.tailcall = counting_tailcall,
	.function_added = counting_function_added,
	.fini = counting_fini);
