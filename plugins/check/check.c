/*
 * check: verifies that segments pair up, for tests and the demo.  Every
 * Leave or Tailcall must end a running segment of its function, every
 * suspended continuation must be resumed once, every resume must follow
 * its suspension (or race just ahead of it), and with
 * expect=NAME:PAIRS,... each named function must make exactly PAIRS
 * Enter/Leave pairs.  fini prints a verdict line and fails the process
 * (ELT_E_CHECK_FAILED) on anything but PASS:
 *
 *     ASYNCELT_PLUGINS='counting;check:expect=Work:25,WorkVoid:3'
 *
 * It checks for the whole run, whatever its length: the table of pending
 * continuations drops a key when its balance returns to zero and grows
 * with what is outstanding.  What it cannot check (no memory, or the
 * max-pending=N bound reached) is counted, and the verdict is then
 * INCOMPLETE, never PASS.  It is not a template: it takes a lock on every
 * suspension and resume, to stay simple and obviously correct.
 */
#include <asyncelt.h>
#include <asyncelt/plugin.h>
#include "../common/fork-lock.h"
#include "../common/pages.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Per function, updated by any thread with relaxed atomics. */
struct function_check {
	const char *name;
	_Atomic uint64_t enters, leaves;
	_Atomic long depth;             /* its segments running right now */
	_Atomic uint64_t errors;        /* sequence errors seen in it */
	struct function_check *next;
};

enum problem {
	LEAVE_WITHOUT_ENTER,    /* a Leave while none of its segments runs */
	DOUBLE_SUSPEND,         /* a continuation suspended twice, no resume between */
	DOUBLE_RESUME,          /* a continuation resumed twice, no suspension between */
	PROBLEM_COUNT
};

static const char *const problem_text[PROBLEM_COUNT] = {
	"Leave or Tailcall with no Enter of that function running",
	"continuation suspended twice without a resume",
	"continuation resumed twice without a suspension",
};

/*
 * The continuations with a suspension or a resume outstanding, and their
 * balance: +1 suspended and waiting for its resume; -1 resumed before the
 * suspending thread's Leave was seen (the early-resume race).  Linear
 * probing; a key whose balance returns to 0 is deleted (backward shift, no
 * tombstones), so the table holds only what is outstanding.
 */
struct pending {
	uintptr_t continuation;         /* 0: free */
	long balance;
	int uncertain;                  /* a resume placed after a suspension went
	                                   unrecorded: it may be that one's */
};

struct pending_table {
	struct pending *slot;
	size_t mask;                    /* slots - 1; slots a power of two */
	size_t used;
	size_t peak;                    /* the most used at once */
};

struct expectation {
	char name[64];
	unsigned long pairs;
};

struct check {
	FILE *out;
	struct expectation *expect;
	size_t nexpect;
	size_t max_pending;             /* 0: no bound */
	struct fork_lock lock;          /* functions list and the pending table */
	struct function_check *functions, **tail;
	struct function_check unregistered;
	struct pending_table pending;
	_Atomic uint64_t problems[PROBLEM_COUNT];
	uint64_t checked;               /* suspensions and resumes checked */
	uint64_t unchecked;             /* ... and not: no room in the table */
	int lost_track;                 /* a suspension went unrecorded */
};

/* --- the pending-continuation table (under the lock) --------------------- */

static size_t home_of(const struct pending_table *t, uintptr_t k)
{
	/* the high bits of the product depend on every bit of the address */
	return (size_t)(((uint64_t)k * 0x9e3779b97f4a7c15ull) >> 32) & t->mask;
}

static struct pending *find(const struct pending_table *t, uintptr_t k)
{
	size_t i;

	if (!t->slot)
		return NULL;
	for (i = home_of(t, k); t->slot[i].continuation; i = (i + 1) & t->mask)
		if (t->slot[i].continuation == k)
			return &t->slot[i];
	return NULL;
}

/* Places k in a table known to have room. */
static struct pending *place(struct pending_table *t, const struct pending *p)
{
	size_t i = home_of(t, p->continuation);

	while (t->slot[i].continuation)
		i = (i + 1) & t->mask;
	t->slot[i] = *p;
	if (++t->used > t->peak)
		t->peak = t->used;
	return &t->slot[i];
}

/* Keeps the load at most one half; returns -1 when out of memory. */
static int make_room(struct pending_table *t)
{
	struct pending_table bigger;
	size_t i;

	if (t->slot && 2 * (t->used + 1) <= t->mask + 1)
		return 0;
	bigger.mask = t->slot ? 2 * t->mask + 1 : 63;
	bigger.used = 0;
	bigger.peak = t->peak;
	/* mapped, not malloc'd: a segment may come from a signal handler */
	bigger.slot = pages_map((bigger.mask + 1) * sizeof(*bigger.slot));
	if (!bigger.slot)
		return -1;
	for (i = 0; t->slot && i <= t->mask; i++)
		if (t->slot[i].continuation)
			place(&bigger, &t->slot[i]);
	if (t->slot)
		pages_unmap(t->slot, (t->mask + 1) * sizeof(*t->slot));
	*t = bigger;
	return 0;
}

/* Removes the key at p, shifting back the keys its slot kept from home. */
static void drop(struct pending_table *t, struct pending *p)
{
	size_t hole = (size_t)(p - t->slot), i = hole;

	for (;;) {
		size_t home;

		i = (i + 1) & t->mask;
		if (!t->slot[i].continuation)
			break;
		home = home_of(t, t->slot[i].continuation);
		/* the key at i may fill the hole when its home is not in (hole, i] */
		if (((i - home) & t->mask) >= ((i - hole) & t->mask)) {
			t->slot[hole] = t->slot[i];
			hole = i;
		}
	}
	t->slot[hole].continuation = 0;
	t->used--;
}

/* --- options ------------------------------------------------------------- */

static elt_status parse_expect(struct check *c, const char *v, size_t len)
{
	/* "expect=$LIST" with an empty list would pass, checking nothing */
	if (len == 0)
		return elt_set_error(ELT_E_BAD_OPTION, "expect: no NAME:PAIRS given");
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

/* Its output's path goes to `path` (empty: none given), opened by the
 * caller once every option is known good. */
static elt_status parse_options(struct check *c, const char *options, char *path, size_t size)
{
	const char *cursor = options;
	elt_option opt;
	elt_status st;

	while ((st = elt_option_next(&cursor, &opt)) == ELT_OK && opt.key) {
		if (elt_option_is(&opt, "expect")) {
			st = parse_expect(c, opt.value, opt.value_len);
		} else if (elt_option_is(&opt, "max-pending")) {
			uint64_t n;

			st = elt_option_number(&opt, 0, SIZE_MAX, &n);
			if (st == ELT_OK)
				c->max_pending = (size_t)n;
		} else if (elt_option_is(&opt, "output")) {
			st = elt_option_copy(&opt, path, size);
		} else {
			return elt_set_error(ELT_E_BAD_OPTION, "unknown option \"%.*s\" "
					     "(known: expect, max-pending, output)",
					     (int)opt.key_len, opt.key);
		}
		if (st != ELT_OK)
			return st;
	}
	return st;
}

static void release(struct check *c)
{
	struct function_check *f, *next;

	if (c->out && c->out != stderr)
		fclose(c->out);
	for (f = c->functions; f; f = next) {
		next = f->next;
		free(f);
	}
	if (c->pending.slot)
		pages_unmap(c->pending.slot, (c->pending.mask + 1) * sizeof(*c->pending.slot));
	free(c->expect);
	fork_lock_destroy(&c->lock);
	free(c);
}

static elt_status check_init(const char *options, void **state)
{
	struct check *c = calloc(1, sizeof(*c));
	char path[4096] = "";
	elt_status st;

	if (!c)
		return elt_set_error(ELT_E_NO_MEMORY, "out of memory");
	fork_lock_init(&c->lock);
	c->tail = &c->functions;
	c->unregistered.name = "(unregistered)";
	c->out = stderr;
	st = parse_options(c, options, path, sizeof(path));
	if (st == ELT_OK && *path && !(c->out = fopen(path, "w"))) {
		c->out = stderr;
		st = elt_set_error(ELT_E_IO, "output: cannot write %s: %s", path, strerror(errno));
	}
	if (st != ELT_OK) {
		release(c);
		return st;
	}
	*state = c;
	return ELT_OK;
}

static void *check_function_added(void *state, const elt_function_desc *fn)
{
	struct check *c = state;
	struct function_check *f = calloc(1, sizeof(*f));

	if (!f)
		return NULL;    /* its segments count as unregistered */
	f->name = fn->name;
	fork_lock(&c->lock);
	*c->tail = f;
	c->tail = &f->next;
	fork_unlock(&c->lock);
	return f;
}

/* --- the segments -------------------------------------------------------- */

static void problem(struct check *c, struct function_check *f, enum problem p)
{
	atomic_fetch_add_explicit(&c->problems[p], 1, memory_order_relaxed);
	atomic_fetch_add_explicit(&f->errors, 1, memory_order_relaxed);
}

/*
 * A suspension (delta +1) or a resume (-1) of continuation k.  The balance
 * may reach -1 (a resume seen before its suspension's Leave) or +1, never
 * beyond; at 0 the key goes.  Returns the problem found, or PROBLEM_COUNT.
 * Once a suspension went unrecorded, a resume of an unknown continuation
 * may be its resume: it is kept as uncertain, never called an error.
 */
static enum problem balance(struct check *c, uintptr_t k, long delta)
{
	enum problem found = PROBLEM_COUNT;
	struct pending *p;

	fork_lock(&c->lock);
	p = find(&c->pending, k);
	if (p && p->uncertain && delta < 0) {
		c->unchecked++;         /* the first resume may not have been its */
	} else if (p) {
		c->checked += p->uncertain ? 2 : 1;
		if (p->balance + delta > 1 || p->balance + delta < -1)
			found = delta > 0 ? DOUBLE_SUSPEND : DOUBLE_RESUME;
		else if ((p->balance += delta) == 0)
			drop(&c->pending, p);
	} else if ((c->max_pending && c->pending.used >= c->max_pending) ||
		   make_room(&c->pending) != 0) {
		c->unchecked++;
		c->lost_track |= delta > 0;
	} else {
		struct pending fresh = { k, delta, delta < 0 && c->lost_track };

		place(&c->pending, &fresh);
		c->checked += !fresh.uncertain;
	}
	fork_unlock(&c->lock);
	return found;
}

static struct function_check *checks_of(struct check *c, const elt_info *info)
{
	struct function_check *f = elt_get_function_data(info);

	return f ? f : &c->unregistered;
}

static void segment_ends(struct check *c, struct function_check *f)
{
	atomic_fetch_add_explicit(&f->leaves, 1, memory_order_relaxed);
	if (atomic_fetch_sub_explicit(&f->depth, 1, memory_order_relaxed) <= 0) {
		atomic_fetch_add_explicit(&f->depth, 1, memory_order_relaxed);
		problem(c, f, LEAVE_WITHOUT_ENTER);
	}
}

static void check_enter(const elt_info *info, void *state)
{
	struct check *c = state;
	struct function_check *f = checks_of(c, info);
	void *k = NULL;
	enum problem p;

	atomic_fetch_add_explicit(&f->enters, 1, memory_order_relaxed);
	atomic_fetch_add_explicit(&f->depth, 1, memory_order_relaxed);
	if (elt_get_segment_kind(info) == ELT_SEGMENT_RESUME &&
	    elt_get_continuation(info, &k) == ELT_OK && k &&
	    (p = balance(c, (uintptr_t)k, -1)) != PROBLEM_COUNT)
		problem(c, f, p);
}

static void check_leave(const elt_info *info, void *state)
{
	struct check *c = state;
	struct function_check *f = checks_of(c, info);
	void *k = NULL;
	enum problem p;

	segment_ends(c, f);
	if (elt_get_segment_kind(info) == ELT_SEGMENT_SUSPEND &&
	    elt_get_continuation(info, &k) == ELT_OK && k &&
	    (p = balance(c, (uintptr_t)k, +1)) != PROBLEM_COUNT)
		problem(c, f, p);
}

static void check_tailcall(const elt_info *info, void *state)
{
	/* The frame is replaced: its segment ends here. */
	segment_ends(state, checks_of(state, info));
}

/* --- the verdict --------------------------------------------------------- */

#define LOAD(x) atomic_load_explicit(&(x), memory_order_relaxed)

static struct function_check *named(struct check *c, const char *name)
{
	struct function_check *f;

	for (f = c->functions; f; f = f->next)
		if (strcmp(f->name, name) == 0)
			return f;
	return NULL;
}

/* Checks one expectation; prints its verdict; returns 1 when met. */
static int met(struct check *c, const struct expectation *e)
{
	struct function_check *f = named(c, e->name);
	char why[160] = "";

	if (!f)
		snprintf(why, sizeof(why), "never registered");
	else if (LOAD(f->enters) != e->pairs || LOAD(f->leaves) != e->pairs)
		snprintf(why, sizeof(why), "%llu Enter and %llu Leave callbacks, want %lu of each",
			 (unsigned long long)LOAD(f->enters),
			 (unsigned long long)LOAD(f->leaves), e->pairs);
	else if (LOAD(f->depth) != 0)
		snprintf(why, sizeof(why), "depth %ld at exit, want 0", LOAD(f->depth));
	else if (LOAD(f->errors))
		snprintf(why, sizeof(why), "%llu sequence errors",
			 (unsigned long long)LOAD(f->errors));
	fprintf(c->out, "expect %s: %lu pairs: %s%s%s\n", e->name, e->pairs,
		*why ? "FAIL (" : "PASS", why, *why ? ")" : "");
	return !*why;
}

static elt_status check_fini(void *state)
{
	struct check *c = state;
	struct function_check *f;
	unsigned long long suspended = 0, early = 0, problems = 0, pairs = 0;
	size_t i, nmet = 0;
	const char *verdict;
	elt_status st = ELT_OK;
	int p, unwritten;

	fprintf(c->out, "asyncelt check report\n");
	for (f = c->functions; f; f = f->next)
		pairs += LOAD(f->leaves);
	for (i = 0; c->pending.slot && i <= c->pending.mask; i++) {
		const struct pending *left = &c->pending.slot[i];

		if (!left->continuation)
			continue;
		if (left->uncertain)
			c->unchecked++;
		else if (left->balance > 0)
			suspended++;
		else
			early++;
	}
	for (p = 0; p < PROBLEM_COUNT; p++) {
		problems += LOAD(c->problems[p]);
		if (LOAD(c->problems[p]))
			fprintf(c->out, "sequence error: %s: %llu\n", problem_text[p],
				(unsigned long long)LOAD(c->problems[p]));
	}
	for (f = c->functions; f; f = f->next)
		if (LOAD(f->errors))
			fprintf(c->out, "sequence errors in %s: %llu\n", f->name,
				(unsigned long long)LOAD(f->errors));
	/* Not a failure by itself: a program may exit inside functions. */
	for (f = c->functions; f; f = f->next)
		if (LOAD(f->depth) || LOAD(f->enters) != LOAD(f->leaves))
			fprintf(c->out, "unbalanced at exit: %s: %llu Enter, %llu Leave, depth %ld\n",
				f->name, (unsigned long long)LOAD(f->enters),
				(unsigned long long)LOAD(f->leaves), LOAD(f->depth));
	if (suspended)
		fprintf(c->out, "suspended and never resumed: %llu\n", suspended);
	if (early)
		fprintf(c->out, "resumed and never suspended: %llu\n", early);
	fprintf(c->out, "continuations pending at once, at most: %zu\n", c->pending.peak);
	if (c->unchecked)
		fprintf(c->out, "suspensions and resumes not checked (%s): %llu\n",
			c->max_pending ? "max-pending reached, or out of memory" : "out of memory",
			(unsigned long long)c->unchecked);
	for (i = 0; i < c->nexpect; i++)
		nmet += met(c, &c->expect[i]);

	verdict = problems || early || nmet < c->nexpect ? "FAIL"
		: c->unchecked ? "INCOMPLETE" : "PASS";
	fprintf(c->out, "check: %s (%zu of %zu expectations met; %llu pairs, "
		"%llu suspensions and resumes checked, %llu not)\n", verdict, nmet,
		c->nexpect, pairs, (unsigned long long)c->checked,
		(unsigned long long)c->unchecked);
	/* A full disk shows at the flush, or earlier, in the error flag. */
	unwritten = fflush(c->out) != 0 || ferror(c->out) ||
		    (c->out != stderr && fclose(c->out) != 0);
	c->out = NULL;
	release(c);
	/* The library reports the message, whichever status goes with it. */
	if (unwritten)
		st = elt_set_error(ELT_E_IO, "the verdict could not be written: %s",
				   strerror(errno));
	return strcmp(verdict, "PASS") ? ELT_E_CHECK_FAILED : st;
}

ELT_PLUGIN_DEFINE(check,
	.description = "checks that segments pair up and meet expect=NAME:PAIRS",
	.init = check_init,
	.enter = check_enter,
	.leave = check_leave,
	.tailcall = check_tailcall,
	.function_added = check_function_added,
	.fini = check_fini,
	.flags = ELT_PLUGIN_NO_FLOAT);
