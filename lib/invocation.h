/*
 * Logical invocations, the part that runs for every segment: inline, so
 * that a plain call and its return cost the dispatcher a few loads and
 * stores.  Everything rarer (suspensions, resumes, records, the public
 * API) is in invocation.c, which explains the design.
 *
 * An invocation lives in its thread's shadow-stack entry while its
 * segment runs: id, function, and its parent is the entry below.  It gets
 * a record only when it must outlive the segment (a suspension), when a
 * plugin asks for its slot, or when it is an orphan; then the record is
 * what describes it, and it follows the invocation across threads.
 */
#ifndef ELT_INVOCATION_H
#define ELT_INVOCATION_H

#include "internal.h"
#include "test-points.h"

#define ELT_RECORD_ALIGN 32

struct record_chunk;            /* invocation.c: records and their storage */

struct elt_invocation_record {
	elt_invocation inv;
	/* Atomic: a resume on another thread reads it while probing the
	 * continuation table, and the record may be reused meanwhile. */
	_Atomic elt_function_id function;
	const struct elt_function *fn;
	/* While published: the continuation its resume will receive. */
	_Atomic uintptr_t continuation;
	/* From start to completion: what elt_foreach_live_invocation lists. */
	_Atomic unsigned char live;
	/* slots[0 .. slots_valid) are initialized: they are cleared when a
	 * plugin first asks, not at every call. */
	uint8_t slots_valid;
	/* Bit p: plugin p's storage was zeroed for this invocation. */
	uint16_t storage_ready;
	/* Bit p: plugin p was told it was abandoned, and so does not see it
	 * again (elt_foreach_live_invocation) if another keeps it. */
	uint16_t told;
	/* Where its plugins' storage is: its chunk's areas, at `index`. */
	uint16_t index;
	struct record_chunk *chunk;
	/* Free records: the thread's free list, or a batch given back
	 * (invocation.c); next_batch only in a batch's first record.  A live
	 * record abandoned: the thread's queue of them (next_free). */
	struct elt_invocation_record *next_free, *next_batch;
	void *slots[ELT_MAX_PLUGINS];
} __attribute__((aligned(ELT_RECORD_ALIGN)));
_Static_assert(ELT_MAX_PLUGINS <= 16, "a bit per plugin in storage_ready and told");

/* Aligned so that a continuation-table slot can hold a record's address
 * and, in the low bits the alignment leaves free, a few bits of its
 * continuation's hash (invocation.c). */

/* Records are carved from mapped chunks by batches (invocation.c); a
 * thread keeping more free records than ELT_MAX_FREE_RECORDS gives a
 * batch back, since one thread may start what others complete. */
#define ELT_RECORDS_PER_BLOCK 64
#define ELT_MAX_FREE_RECORDS (4 * ELT_RECORDS_PER_BLOCK)

/* One shadow-stack entry. */
struct elt_shadow_entry {
	struct elt_invocation_record *record;   /* NULL: not needed yet */
	elt_function_id function;
	elt_invocation_id id;
	/* Without a record, bit p: plugin p's invocation storage for it is
	 * in the thread's storage stack, zeroed (invocation.c). */
	uint16_t storage_ready;
};

/* One thread's part of the tracking, inside the record threads.c
 * allocates for it: no TLS of its own but one pointer, elt_thread.invocations. */
struct elt_thread_invocations {
	/* The invocations whose segment runs on this thread, innermost last.
	 * Grows by doubling (a rare realloc). */
	struct elt_shadow_entry *stack;
	uint32_t depth, capacity;
	/* By plugin slot: the invocation storage of entries without a record
	 * (most invocations never get one), the entry at depth d at
	 * d * its size; storage_capacity entries, mapped when first asked. */
	unsigned char *storage[ELT_MAX_PLUGINS];
	uint32_t storage_capacity[ELT_MAX_PLUGINS];
	uint32_t index;                 /* dense thread number, from 1 */
	uint32_t free_count;
	/* Records this thread hands out; refilled a block at a time. */
	struct elt_invocation_record *free_records;
	/* Invocations this thread found abandoned, for the dispatcher to
	 * tell the plugins of after a Leave's callbacks: that Leave's, or,
	 * for one a resume found, the thread's next (elt_invocation_end). */
	struct elt_invocation_record *abandoned;
	/* This thread's block of ids: next_id up to (excluding) end_id. */
	elt_invocation_id next_id, end_id;
	/* Segments of async functions on this thread's stack now; the same
	 * count is in this thread's async shard, for other threads. */
	uint32_t async_running;
	/* Written by this thread only (relaxed load and store), read by
	 * elt_get_invocation_stats(): no shared cache line per segment. */
	_Atomic uint64_t started, completed;
};

/*
 * The evidence a resume waits on (invocation.c, take_waiting): how many
 * segments of async functions run now, and how many have ended, in one
 * shard per thread (threads beyond ELT_ASYNC_SHARDS share).  A resume whose
 * continuation is not published waits only while a segment that was
 * running when it looked has not ended: only such a segment can still
 * publish it.  One cache line each, written by its thread(s) only.
 */
#define ELT_ASYNC_SHARDS 64
struct elt_async_shard {
	_Atomic uint32_t running, ended;
} __attribute__((aligned(64)));
ELT_HIDDEN extern struct elt_async_shard elt_async_shards[ELT_ASYNC_SHARDS];

static inline struct elt_async_shard *
elt_async_shard_of(const struct elt_thread_invocations *t)
{
	return &elt_async_shards[t->index % ELT_ASYNC_SHARDS];
}

/* A segment of an async function starts on thread t (a call or a resume). */
static inline void elt_async_segment_started(struct elt_thread_invocations *t)
{
	t->async_running++;
	ELT_TEST_POINT(ELT_POINT_ASYNC_COUNTED, 0);
	atomic_fetch_add_explicit(&elt_async_shard_of(t)->running, 1,
				  memory_order_relaxed);
}

/* ... or ends: after its publication, which the releases order before
 * both counts a resume reads with acquire: one that sees the segment no
 * longer running, though not yet ended, must find what it published
 * (take_waiting). */
static inline void elt_async_segment_ended(struct elt_thread_invocations *t)
{
	struct elt_async_shard *s = elt_async_shard_of(t);

	t->async_running--;
	ELT_TEST_POINT(ELT_POINT_ASYNC_COUNTED, 0);
	atomic_fetch_sub_explicit(&s->running, 1, memory_order_release);
	atomic_fetch_add_explicit(&s->ended, 1, memory_order_release);
}

static inline int elt_is_async(const struct elt_function *fn)
{
	return fn && (fn->desc.flags & ELT_FUNCTION_ASYNC);
}

/* Reads $ASYNCELT_RESUME_WAIT_MS; once, at the library's start. */
ELT_HIDDEN void elt_invocations_init(void);
/* A thread's first segment (0: out of memory), and its exit, called with
 * the thread list locked (see elt_threads_foreach). */
ELT_HIDDEN int elt_invocation_thread_init(struct elt_thread_invocations *t);
ELT_HIDDEN void elt_invocation_thread_exit(struct elt_thread_invocations *t);
/* In a fork child, a thread that does not exist there (threads.c): what it
 * was running is the parent's, uncounted, and no resume waits for it. */
ELT_HIDDEN void elt_invocation_thread_forget(struct elt_thread_invocations *t);
/* In a fork child, once, after the other threads are forgotten: what they
 * left half done in the continuation table is finished or undone, and the
 * async segments running are counted again, `self`'s (the forking
 * thread's; NULL when it was never attached). */
ELT_HIDDEN void elt_invocations_after_fork_child(const struct elt_thread_invocations *self);
/* At shutdown: one diagnostic per kind of trouble seen. */
ELT_HIDDEN void elt_invocations_report(void);

/* The slow paths of the functions below. */
ELT_HIDDEN elt_invocation_id elt_invocation_id_block(struct elt_thread_invocations *t);
ELT_HIDDEN int elt_invocation_grow(struct elt_thread_invocations *t);
ELT_HIDDEN struct elt_shadow_entry *
elt_invocation_match_deeper(struct elt_thread_invocations *t, elt_function_id function);
ELT_HIDDEN struct elt_shadow_entry *
elt_invocation_resume(struct elt_thread_invocations *t, const struct elt_info *info);
ELT_HIDDEN void elt_invocation_suspend(struct elt_thread_invocations *t,
				       struct elt_shadow_entry *e,
				       const struct elt_info *info);
ELT_HIDDEN void elt_invocation_free(struct elt_thread_invocations *t,
				    struct elt_invocation_record *r);

/* The abandoned invocations a segment found, one at a time (NULL: none
 * left), for the dispatcher to tell the plugins of; each then stays live
 * or is forgotten. */
ELT_HIDDEN struct elt_invocation_record *
elt_invocation_next_abandoned(struct elt_thread_invocations *t);
ELT_HIDDEN void elt_invocation_forget(struct elt_thread_invocations *t,
				      struct elt_invocation_record *r);
/* What plugin `plugin` holds for r: its storage if it has any, else its
 * slot's value; NULL for nothing. */
ELT_HIDDEN void *elt_invocation_plugin_data(struct elt_invocation_record *r,
					    unsigned plugin);

/* Only this thread writes its counters: a plain add, published with a
 * relaxed store for elt_get_invocation_stats(). */
static inline void elt_invocation_count(_Atomic uint64_t *counter)
{
	atomic_store_explicit(counter,
			      atomic_load_explicit(counter, memory_order_relaxed) + 1,
			      memory_order_relaxed);
}

/* Pushes an entry for a new invocation, or one resumed (record given);
 * NULL when the stack cannot grow (its Leave will count as unbalanced). */
static inline struct elt_shadow_entry *
elt_invocation_push(struct elt_thread_invocations *t, elt_function_id function,
		    elt_invocation_id id, struct elt_invocation_record *record)
{
	struct elt_shadow_entry *e;

	if (ELT_UNLIKELY(t->depth == t->capacity) && !elt_invocation_grow(t))
		return NULL;
	e = &t->stack[t->depth++];
	e->record = record;
	e->function = function;
	e->id = id;
	e->storage_ready = 0;
	return e;
}

/* Before the plugins' callbacks: the segment's invocation, started (a
 * call), found again (a resume) or matched on the shadow stack (a Leave or
 * Tailcall: normally the innermost entry).  A Leave that skipped frames
 * abandons them (queued on the thread: elt_invocation_end). */
static inline void elt_invocation_begin(struct elt_info *info)
{
	struct elt_thread_invocations *t = elt_thread.invocations;
	struct elt_shadow_entry *e;

	if (ELT_UNLIKELY(!t)) {
		info->invocation = NULL;        /* the thread is exiting */
		return;
	}
	switch (info->head.kind) {
	case ELT_SEGMENT_CALL:
		elt_invocation_count(&t->started);
		info->invocation = elt_invocation_push(t, info->head.id,
			ELT_LIKELY(t->next_id != t->end_id) ? t->next_id++
							    : elt_invocation_id_block(t),
			NULL);
		if (elt_is_async(elt_info_function(info)) && info->invocation)
			elt_async_segment_started(t);
		return;
	case ELT_SEGMENT_RESUME:
		info->invocation = elt_invocation_resume(t, info);
		return;
	default:
		e = t->depth ? &t->stack[t->depth - 1] : NULL;
		if (ELT_UNLIKELY(!e || e->function != info->head.id))
			e = elt_invocation_match_deeper(t, info->head.id);
		info->invocation = e;
		return;
	}
}

/* After the callbacks: a Leave or Tailcall pops its invocation, and
 * publishes it (a suspension: the resume's callbacks then run after this
 * segment's) or ends it.  Nonzero when invocations wait on the thread's
 * queue of abandoned ones: frames this segment skipped, a continuation
 * its publication found reused, or (rarely) a record an earlier resume
 * on this thread took in error and put back. */
static inline int elt_invocation_end(struct elt_info *info)
{
	struct elt_thread_invocations *t = elt_thread.invocations;
	struct elt_shadow_entry *e = info->invocation;

	if (info->head.kind <= ELT_SEGMENT_RESUME || !e || !t)
		return 0;               /* a call or resume stays on the stack */
	t->depth--;
	if (info->head.kind == ELT_SEGMENT_SUSPEND) {
		elt_invocation_suspend(t, e, info);     /* counts the end */
		return t->abandoned != NULL;
	}
	elt_invocation_count(&t->completed);
	if (e->record)
		elt_invocation_free(t, e->record);
	if (elt_is_async(elt_info_function(info)))
		elt_async_segment_ended(t);
	return t->abandoned != NULL;
}

#endif
