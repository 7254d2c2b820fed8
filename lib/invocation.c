/*
 * Logical invocations: the segments of one call stitched together, with
 * no help from the runtime.
 *
 * Each thread keeps a shadow stack of the invocations whose segment runs
 * on it: a call or a resume pushes, the Leave or Tailcall that ends the
 * segment pops.  The stack gives a new call its parent and tells a Leave
 * which invocation it ends.  A suspension publishes its invocation under
 * the continuation it returns, in a lock-free table; the resume that
 * receives that continuation takes it out, on whatever thread.
 *
 * The common path neither locks nor allocates: records come from the
 * thread's free list, ids from the thread's block of ids (one shared
 * atomic add per ID_BLOCK calls), counters are the thread's own.  Rare
 * paths may: a free list that must be refilled or that grew too long
 * (pool_lock, once per RECORDS_PER_BLOCK records), a shadow stack that
 * must grow (realloc), a resume that arrives before the Leave of its
 * suspension (it waits, see take_waiting()).
 */
#include "internal.h"

#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

struct elt_invocation_record {
	elt_invocation inv;
	/* Atomic: a resume on another thread compares it while scanning the
	 * table, and the record may be reused meanwhile. */
	_Atomic elt_function_id function;
	const struct elt_function *fn;
	/* While published: the continuation its resume will receive. */
	_Atomic uintptr_t continuation;
	/* From start to completion: what elt_foreach_live_invocation lists. */
	_Atomic unsigned char live;
	struct elt_invocation_record *next_free;
	void *slots[ELT_MAX_PLUGINS];
};

/* Records are allocated by blocks and never freed: a resume scanning the
 * table may read a record that another thread has just taken and reused. */
#define RECORDS_PER_BLOCK 64
struct record_block {
	struct record_block *next;
	struct elt_invocation_record records[RECORDS_PER_BLOCK];
};

/* A thread keeping more free records than this gives RECORDS_PER_BLOCK
 * back: one thread may start what others complete. */
#define MAX_FREE_RECORDS (4 * RECORDS_PER_BLOCK)

static pthread_mutex_t pool_lock = PTHREAD_MUTEX_INITIALIZER;
static struct record_block *blocks;             /* all of them, for enumeration */
static struct elt_invocation_record *spare;     /* free records no thread holds */

#define ID_BLOCK 1024
static _Atomic uint64_t next_id_block = 1;     /* ids start at 1: 0 is "none" */
static _Atomic uint32_t thread_count;

/* Rare events: shared counters are cheap enough for them. */
static _Atomic uint64_t orphan_resumes, early_resumes, unbalanced_leaves,
	abandoned, unpublished, waiting_resumes;
/* What exited threads started and completed; updated with the thread
 * list locked, like the per-thread counters are summed. */
static _Atomic uint64_t exited_started, exited_completed;

/* How long a resume waits for the Leave that publishes its continuation;
 * $ASYNCELT_RESUME_WAIT_MS. */
#define DEFAULT_RESUME_WAIT_MS 50
#define MAX_RESUME_WAIT_MS 10000
static long resume_wait_ns = DEFAULT_RESUME_WAIT_MS * 1000000L;

/* --- the continuation table ----------------------------------------------
 *
 * Suspended invocations by continuation.  A slot holds a record (whose
 * `continuation` is the key) or NULL.  A continuation lives in one of the
 * WINDOW slots from its hash: bounded probes, so a removal may leave a hole
 * (no tombstones, no clean-up) and every operation costs at most WINDOW
 * loads.  A suspension that finds no room in its window is counted
 * (unpublished): its resume becomes an orphan.  Insertion and removal are
 * one compare-and-swap each; the swap that publishes releases what the
 * suspending segment wrote (its plugins' slots), the one that takes
 * acquires it.
 */
#define TABLE_BITS 16
#define TABLE_SIZE (1u << TABLE_BITS)
#define WINDOW 32
static struct elt_invocation_record *_Atomic suspended[TABLE_SIZE];

static inline uint32_t table_hash(uintptr_t continuation)
{
	return (uint32_t)(((uint64_t)continuation * 0x9e3779b97f4a7c15ull) >>
			  (64 - TABLE_BITS));
}

static inline struct elt_invocation_record *_Atomic *table_slot(uint32_t h, uint32_t i)
{
	return &suspended[(h + i) & (TABLE_SIZE - 1)];
}

static inline uintptr_t key_of(const struct elt_invocation_record *r)
{
	return atomic_load_explicit(&r->continuation, memory_order_relaxed);
}

/* A suspension.  An entry under the same continuation that is still there
 * belongs to an invocation that never resumed, whose continuation the
 * runtime has now reused: that one can no longer be resumed, so it is
 * removed (it stays live, counted as abandoned) rather than confused with
 * the new one. */
static void publish(struct elt_invocation_record *r, uintptr_t continuation)
{
	uint32_t h = table_hash(continuation), i;
	int placed = 0;

	atomic_store_explicit(&r->continuation, continuation, memory_order_relaxed);
	for (i = 0; i < WINDOW; i++) {
		struct elt_invocation_record *_Atomic *slot = table_slot(h, i);
		struct elt_invocation_record *old =
			atomic_load_explicit(slot, memory_order_relaxed);

		if (!old && !placed &&
		    atomic_compare_exchange_strong_explicit(slot, &old, r,
							    memory_order_release,
							    memory_order_relaxed)) {
			placed = 1;
			continue;
		}
		if (old && old != r && key_of(old) == continuation &&
		    atomic_compare_exchange_strong_explicit(slot, &old, NULL,
							    memory_order_acquire,
							    memory_order_relaxed)) {
			atomic_store_explicit(&old->continuation, 0, memory_order_relaxed);
			atomic_fetch_add_explicit(&abandoned, 1, memory_order_relaxed);
		}
	}
	if (ELT_UNLIKELY(!placed)) {
		atomic_store_explicit(&r->continuation, 0, memory_order_relaxed);
		atomic_fetch_add_explicit(&unpublished, 1, memory_order_relaxed);
	}
}

/* The suspended invocation of `function` waiting under `continuation`,
 * taken out of the table; NULL when there is none. */
static struct elt_invocation_record *take(uintptr_t continuation,
					  elt_function_id function)
{
	uint32_t h = table_hash(continuation), i;

	for (i = 0; i < WINDOW; i++) {
		struct elt_invocation_record *_Atomic *slot = table_slot(h, i);
		struct elt_invocation_record *r =
			atomic_load_explicit(slot, memory_order_relaxed);

		if (!r || key_of(r) != continuation ||
		    atomic_load_explicit(&r->function, memory_order_relaxed) != function)
			continue;
		if (atomic_compare_exchange_strong_explicit(slot, &r, NULL,
							    memory_order_acquire,
							    memory_order_relaxed)) {
			atomic_store_explicit(&r->continuation, 0, memory_order_relaxed);
			return r;
		}
	}
	return NULL;
}

/*
 * A resume whose continuation is not in the table yet may have overtaken
 * its suspension: a multithreaded dispatcher can run the continuation as
 * soon as the runtime has it, before the suspending thread's Leave helper
 * (and our publish, which follows that Leave's callbacks) is done.  The
 * resume then waits, yielding, up to resume_wait_ns, so that it gets the
 * same id and its callbacks run after the suspension's.  Only a
 * continuation never seen suspending waits the whole time (once, then it
 * is an orphan); the wait is the one system call (sched_yield) on this
 * path, and only on it.
 */
static long elapsed_ns(const struct timespec *from)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return (now.tv_sec - from->tv_sec) * 1000000000L + (now.tv_nsec - from->tv_nsec);
}

static struct elt_invocation_record *take_waiting(uintptr_t continuation,
						  elt_function_id function)
{
	struct elt_invocation_record *r = take(continuation, function);
	struct timespec start;

	if (ELT_LIKELY(r) || resume_wait_ns == 0)
		return r;
	atomic_fetch_add_explicit(&waiting_resumes, 1, memory_order_relaxed);
	clock_gettime(CLOCK_MONOTONIC, &start);
	do {
		sched_yield();
		r = take(continuation, function);
	} while (!r && elapsed_ns(&start) < resume_wait_ns);
	if (r)
		atomic_fetch_add_explicit(&early_resumes, 1, memory_order_relaxed);
	atomic_fetch_sub_explicit(&waiting_resumes, 1, memory_order_relaxed);
	return r;
}

/* --- records and ids ----------------------------------------------------- */

/* Rare: this thread's free list is empty.  Records of exited threads (or
 * given back) first, else a new block. */
static void refill(struct elt_thread_invocations *t)
{
	struct record_block *b;
	unsigned i;

	pthread_mutex_lock(&pool_lock);
	for (i = 0; spare && i < RECORDS_PER_BLOCK; i++) {
		struct elt_invocation_record *r = spare;

		spare = r->next_free;
		r->next_free = t->free_records;
		t->free_records = r;
	}
	t->free_count += i;
	if (i == 0 && (b = calloc(1, sizeof(*b)))) {
		b->next = blocks;
		blocks = b;
		for (i = 0; i < RECORDS_PER_BLOCK; i++) {
			b->records[i].next_free = t->free_records;
			t->free_records = &b->records[i];
		}
		t->free_count += RECORDS_PER_BLOCK;
	}
	pthread_mutex_unlock(&pool_lock);
}

/* Gives `count` of this thread's free records to the spare list. */
static void give_back(struct elt_thread_invocations *t, unsigned count)
{
	struct elt_invocation_record *first = t->free_records, *last = first;
	unsigned i;

	if (!first || count == 0)
		return;
	for (i = 1; i < count && last->next_free; i++)
		last = last->next_free;
	t->free_records = last->next_free;
	t->free_count -= i;
	pthread_mutex_lock(&pool_lock);
	last->next_free = spare;
	spare = first;
	pthread_mutex_unlock(&pool_lock);
}

static inline elt_invocation_id id_new(struct elt_thread_invocations *t)
{
	if (ELT_UNLIKELY(t->next_id == t->end_id)) {
		t->next_id = atomic_fetch_add_explicit(&next_id_block, ID_BLOCK,
						       memory_order_relaxed);
		t->end_id = t->next_id + ID_BLOCK;
	}
	return t->next_id++;
}

/* Only this thread writes its counters: a plain add, published with a
 * relaxed store for elt_get_invocation_stats(). */
static inline void count(_Atomic uint64_t *counter)
{
	atomic_store_explicit(counter,
			      atomic_load_explicit(counter, memory_order_relaxed) + 1,
			      memory_order_relaxed);
}

/* A new invocation for this segment; NULL when out of memory. */
static struct elt_invocation_record *start(struct elt_thread_invocations *t,
					   const struct elt_info *info, uint32_t flags)
{
	struct elt_invocation_record *r = t->free_records;

	if (ELT_UNLIKELY(!r)) {
		refill(t);
		if (!(r = t->free_records))
			return NULL;
	}
	t->free_records = r->next_free;
	t->free_count--;

	r->inv.id = id_new(t);
	r->inv.parent = t->depth ? t->stack[t->depth - 1]->inv.id : 0;
	r->inv.segment = 0;
	r->inv.flags = flags;
	if (info->fn && (info->fn->desc.flags & ELT_FUNCTION_ASYNC))
		r->inv.flags |= ELT_INVOCATION_ASYNC;
	r->inv.thread = r->inv.previous_thread = t->index;
	atomic_store_explicit(&r->function, info->id, memory_order_relaxed);
	r->fn = info->fn;
	memset(r->slots, 0, sizeof(r->slots));
	atomic_store_explicit(&r->live, 1, memory_order_relaxed);
	count(&t->started);
	return r;
}

static void finish(struct elt_thread_invocations *t, struct elt_invocation_record *r)
{
	atomic_store_explicit(&r->live, 0, memory_order_relaxed);
	count(&t->completed);
	r->next_free = t->free_records;
	t->free_records = r;
	if (ELT_UNLIKELY(++t->free_count > MAX_FREE_RECORDS))
		give_back(t, RECORDS_PER_BLOCK);
}

/* --- the shadow stack ---------------------------------------------------- */

static int push(struct elt_thread_invocations *t, struct elt_invocation_record *r)
{
	if (ELT_UNLIKELY(t->depth == t->capacity)) {
		/* Rare: deeper than ever on this thread. */
		uint32_t capacity = t->capacity * 2;
		struct elt_invocation_record **stack =
			realloc(t->stack, capacity * sizeof(*stack));

		if (!stack)
			return 0;       /* its Leave will be counted unbalanced */
		t->stack = stack;
		t->capacity = capacity;
	}
	t->stack[t->depth++] = r;
	return 1;
}

/* The invocation a Leave or Tailcall of `function` ends: the innermost of
 * that function on this thread.  Those above it were left without their
 * Leave (an exception unwound through them): they are taken off the stack,
 * live and counted as abandoned, since they can never complete. */
static struct elt_invocation_record *match(struct elt_thread_invocations *t,
					   elt_function_id function)
{
	uint32_t d = t->depth;

	while (d && atomic_load_explicit(&t->stack[d - 1]->function,
					 memory_order_relaxed) != function)
		d--;
	if (ELT_UNLIKELY(d == 0)) {
		atomic_fetch_add_explicit(&unbalanced_leaves, 1, memory_order_relaxed);
		return NULL;
	}
	if (ELT_UNLIKELY(d != t->depth)) {
		atomic_fetch_add_explicit(&abandoned, t->depth - d, memory_order_relaxed);
		t->depth = d;
	}
	return t->stack[d - 1];
}

static struct elt_invocation_record *resume(struct elt_thread_invocations *t,
					    const struct elt_info *info)
{
	struct elt_invocation_record *r = take_waiting(info->continuation, info->id);

	if (ELT_LIKELY(r)) {
		r->inv.segment++;
		r->inv.previous_thread = r->inv.thread;
		r->inv.thread = t->index;
		return r;
	}
	atomic_fetch_add_explicit(&orphan_resumes, 1, memory_order_relaxed);
	r = start(t, info, ELT_INVOCATION_ORPHAN);
	if (r) {
		r->inv.parent = 0;      /* whoever awaited it is unknown */
		r->inv.segment = 1;     /* a resume, of unknown rank */
	}
	return r;
}

/* --- around the callbacks (dispatch.c) ----------------------------------- */

void elt_invocation_begin(struct elt_info *info)
{
	struct elt_thread_invocations *t = elt_thread_state;
	struct elt_invocation_record *r;

	info->invocation = NULL;
	if (ELT_UNLIKELY(!t))
		return;                 /* the thread is exiting */
	switch (info->kind) {
	case ELT_SEGMENT_CALL:
		r = start(t, info, 0);
		break;
	case ELT_SEGMENT_RESUME:
		r = resume(t, info);
		break;
	default:
		info->invocation = match(t, info->id);
		return;
	}
	if (r)
		push(t, r);
	info->invocation = r;
}

void elt_invocation_end(struct elt_info *info)
{
	struct elt_thread_invocations *t = elt_thread_state;
	struct elt_invocation_record *r = info->invocation;

	if (!r || !t)
		return;
	switch (info->kind) {
	case ELT_SEGMENT_SUSPEND:
		/* After the callbacks: the resume's run after them. */
		t->depth--;
		publish(r, info->continuation);
		break;
	case ELT_SEGMENT_RETURN:
	case ELT_SEGMENT_TAILCALL:
		t->depth--;
		finish(t, r);
		break;
	default:
		break;                  /* a call or resume stays on the stack */
	}
}

/* --- threads ------------------------------------------------------------- */

#define INITIAL_STACK 64

int elt_invocation_thread_init(struct elt_thread_invocations *t)
{
	t->stack = malloc(INITIAL_STACK * sizeof(*t->stack));
	if (!t->stack)
		return 0;
	t->capacity = INITIAL_STACK;
	t->index = atomic_fetch_add_explicit(&thread_count, 1, memory_order_relaxed) + 1;
	return 1;
}

void elt_invocation_thread_exit(struct elt_thread_invocations *t)
{
	/* What is still on the stack never completes: it stays live. */
	atomic_fetch_add(&exited_started,
			 atomic_load_explicit(&t->started, memory_order_relaxed));
	atomic_fetch_add(&exited_completed,
			 atomic_load_explicit(&t->completed, memory_order_relaxed));
	give_back(t, t->free_count);
	free(t->stack);
	t->stack = NULL;
	t->depth = t->capacity = 0;
}

void elt_invocations_init(void)
{
	const char *wait = getenv("ASYNCELT_RESUME_WAIT_MS");
	char *end;
	long ms;

	if (!wait)
		return;
	ms = strtol(wait, &end, 10);
	if (end == wait || *end || ms < 0 || ms > MAX_RESUME_WAIT_MS) {
		elt_report("ASYNCELT_RESUME_WAIT_MS='%s': expected milliseconds from 0 "
			   "to %d; using %d", wait, MAX_RESUME_WAIT_MS,
			   DEFAULT_RESUME_WAIT_MS);
		return;
	}
	resume_wait_ns = ms * 1000000L;
}

/* --- the public getters -------------------------------------------------- */

elt_status elt_get_invocation(const elt_info *info, elt_invocation *out)
{
	if (!out)
		return elt_set_error(ELT_E_INVALID_ARGUMENT, "elt_get_invocation: out is NULL");
	if (!info->invocation) {
		memset(out, 0, sizeof(*out));
		return ELT_E_DATAINCOMPLETE;
	}
	*out = info->invocation->inv;
	return ELT_OK;
}

void **elt_get_invocation_slot(const elt_info *info)
{
	return info->invocation ? &info->invocation->slots[info->plugin] : NULL;
}

static void add_thread(struct elt_thread_invocations *t, void *arg)
{
	elt_invocation_stats *s = arg;

	s->started += atomic_load_explicit(&t->started, memory_order_relaxed);
	s->completed += atomic_load_explicit(&t->completed, memory_order_relaxed);
}

void elt_get_invocation_stats(elt_invocation_stats *out)
{
	if (!out)
		return;
	memset(out, 0, sizeof(*out));
	elt_threads_foreach(add_thread, out);
	/* After the live threads: a thread exiting meanwhile is counted at
	 * most twice, never missed. */
	out->started += atomic_load(&exited_started);
	out->completed += atomic_load(&exited_completed);
	/* Counters of different threads are read at different times: one
	 * invocation's completion may be seen without its start. */
	out->live = out->started > out->completed ? out->started - out->completed : 0;
	out->orphan_resumes = atomic_load(&orphan_resumes);
	out->early_resumes = atomic_load(&early_resumes);
	out->unbalanced_leaves = atomic_load(&unbalanced_leaves);
	out->abandoned = atomic_load(&abandoned);
	out->unpublished = atomic_load(&unpublished);
	out->waiting_resumes = atomic_load(&waiting_resumes);
}

void elt_foreach_live_invocation(const elt_plugin *self,
	void (*fn)(const elt_invocation *, const elt_function_desc *, void *, void *),
	void *arg)
{
	unsigned n = atomic_load_explicit(&elt_plugin_count, memory_order_acquire);
	unsigned plugin, i;
	struct record_block *b;

	if (!fn)
		return;
	for (plugin = 0; plugin < n && elt_plugins[plugin].desc != self; plugin++)
		;
	if (plugin == n) {
		elt_set_error(ELT_E_INVALID_ARGUMENT,
			      "elt_foreach_live_invocation: plugin '%s' was never added",
			      self && self->name ? self->name : "(null)");
		return;
	}
	pthread_mutex_lock(&pool_lock);
	for (b = blocks; b; b = b->next) {
		for (i = 0; i < RECORDS_PER_BLOCK; i++) {
			struct elt_invocation_record *r = &b->records[i];

			if (atomic_load_explicit(&r->live, memory_order_acquire))
				fn(&r->inv, r->fn ? &r->fn->desc : NULL,
				   r->slots[plugin], arg);
		}
	}
	pthread_mutex_unlock(&pool_lock);
}

void elt_invocations_report(void)
{
	elt_invocation_stats s;

	elt_get_invocation_stats(&s);
	if (s.live)
		elt_report("%llu invocations never completed", (unsigned long long)s.live);
	if (s.orphan_resumes)
		elt_report("%llu resumes of a continuation never seen suspending: each "
			   "got a new invocation, flagged orphan",
			   (unsigned long long)s.orphan_resumes);
	if (s.unbalanced_leaves)
		elt_report("%llu Leave or Tailcall segments matched no Enter on their thread",
			   (unsigned long long)s.unbalanced_leaves);
	if (s.abandoned)
		elt_report("%llu invocations were abandoned: left without their Leave "
			   "(unwound), or their continuation reused before a resume",
			   (unsigned long long)s.abandoned);
	if (s.unpublished)
		elt_report("%llu suspensions found no room in the continuation table "
			   "(%u slots): their resumes were orphans",
			   (unsigned long long)s.unpublished, TABLE_SIZE);
}
