/*
 * Logical invocations: the segments of one call stitched together, with
 * no help from the runtime.
 *
 * Each thread keeps a shadow stack of the invocations whose segment runs
 * on it (invocation.h): a call or a resume pushes, the Leave or Tailcall
 * that ends the segment pops.  The stack gives a new call its parent and
 * tells a Leave which invocation it ends.  A suspension moves its
 * invocation into a record and publishes the record under the
 * continuation it returns, in a lock-free table that grows; the resume
 * that receives that continuation takes the record out, on whatever
 * thread.
 *
 * The segment path never locks and never calls malloc, so that a signal
 * handler may report segments even when it interrupted malloc or this
 * very code (doc/runtime.md, "Invocations: memory and guarantees"):
 *  - ids come from the thread's block of ids (one shared atomic add per
 *    ID_BLOCK calls), counters are the thread's own;
 *  - records come from the thread's free list, refilled a batch at a time
 *    from batches other threads gave back (a lock-free stack) or carved
 *    from chunks mapped with mmap (a system call, no lock in libc);
 *  - the shadow stack and the continuation table are mapped too, and
 *    grow by mapping a larger one;
 *  - what can set errno (mmap, clock_gettime, sched_yield) is bracketed
 *    by a save and a restore of it.
 * The same thread never re-enters this file: dispatch() raises
 * elt_in_callback before calling in and ignores segments while it is up,
 * which includes a signal handler's interrupting us.
 */
#include "invocation.h"
#include "continuation-hash.h"
#include "test-points.h"

#include <errno.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#if defined(_WIN32)
# include <windows.h>
#else
# include <sys/mman.h>
#endif

/* elt_invocation_end() tells a Leave from an Enter by this order. */
_Static_assert(ELT_SEGMENT_CALL == 0 && ELT_SEGMENT_RESUME == 1 &&
	       ELT_SEGMENT_SUSPEND > ELT_SEGMENT_RESUME &&
	       ELT_SEGMENT_RETURN > ELT_SEGMENT_RESUME &&
	       ELT_SEGMENT_TAILCALL > ELT_SEGMENT_RESUME,
	       "segment kinds: Enter kinds first");

struct elt_async_shard elt_async_shards[ELT_ASYNC_SHARDS];

#define ID_BLOCK 1024
static _Atomic uint64_t next_id_block = 1;     /* ids start at 1: 0 is "none" */
static _Atomic uint32_t thread_count;

/* Rare events: shared counters are cheap enough for them. */
static _Atomic uint64_t orphan_resumes, early_resumes, unbalanced_leaves,
	abandoned, unpublished, waiting_resumes;
/* Abandoned invocations the plugins let go of: no longer live. */
static _Atomic uint64_t forgotten;
/* What exited threads started and completed; updated with the thread
 * list locked, like the per-thread counters are summed. */
static _Atomic uint64_t exited_started, exited_completed;

/* How long a resume waits, at most, for the Leave that publishes its
 * continuation; $ASYNCELT_RESUME_WAIT_MS. */
#define DEFAULT_RESUME_WAIT_MS 50
#define MAX_RESUME_WAIT_MS 10000
/* 64 bits: a long of 32 (i386, arm, Win64) held 2147 ms at most. */
static int64_t resume_wait_ns = DEFAULT_RESUME_WAIT_MS * INT64_C(1000000);

/* --- the continuation table ----------------------------------------------
 *
 * Suspended invocations by continuation: open addressing in a power-of-two
 * array of words, with two choices.  A continuation may live in either of
 * two buckets of BUCKET slots (one cache line on a 64-bit port), named by
 * two independent hashes: a suspension takes an empty slot of the emptier
 * one, a resume scans both.  Choosing the emptier of two keeps the fullest
 * bucket within a few slots of the average (where a single window, as in
 * linear probing, overflows at half load among a million), so a table is
 * about 70% full before it must grow.  A taken slot is simply emptied (no
 * tombstones, so churn never fills the table), and a lookup never follows
 * a chain: two buckets, always.
 *
 * A slot's word: 0 (empty), or a record's address with four bits of the
 * continuation's hash (TAG_MASK, below the record's alignment) so that a
 * resume dereferences, in expectation, only its own record; FROZEN marks a
 * slot that a migration has passed (below).
 *
 * Growth.  A suspension that finds both its buckets full maps a table
 * twice as large and makes it current; the old one hangs from it
 * (`older`) until its entries have moved.  Every suspension while a
 * migration runs first moves a chunk of MIGRATE_STEP slots (claimed with
 * one atomic add), so the work is spread and nobody waits for it.  A slot
 * moves in three steps: its word gets FROZEN (a compare-and-swap; from
 * then on no resume can take it and no suspension can fill it), its
 * record is inserted into the new table, and the slot becomes a bare
 * FROZEN.  A resume scans the old table first, then the new, then checks
 * that the current table did not change meanwhile (else it scans again):
 * an entry only ever moves from old to new, so it cannot be missed.
 * Meeting a frozen record of its own continuation, a resume yields until
 * the move is done: the one place where a resume may wait for another
 * thread, for the few instructions of one insertion.
 *
 * The new table is twice as large, so the buckets a moving record goes
 * to are about half as full as the one it leaves; yet suspensions since
 * the growth may have filled both.  Such a record waits in the overflow
 * instead (OVERFLOW_SLOTS words, scanned only after a resume has missed
 * in the tables, and only while it holds any), put there before its old
 * slot becomes a bare FROZEN: a resume that finds the slot empty of it
 * finds it there.  When the migration is done, what waits there moves
 * into the table.  Only an overflow full at once loses one (counted as
 * unpublished).
 *
 * Old tables are never unmapped, since a resume may still be scanning
 * one; together they are smaller than the current one.  Measured costs
 * are in doc/runtime.md.
 *
 * Memory order.  A suspension writes the record (its fields, the
 * plugins' slots) and then stores its word with release; a resume loads
 * the word with acquire before it reads the record's key, and takes it
 * with an acquire compare-and-swap: on the weakly ordered ports (aarch64,
 * arm, ppc64le, riscv64) that is what makes the record's contents, and
 * everything the suspending segment did, visible to the resuming thread.
 * The key read may be stale when the record was reused meanwhile: the
 * compare-and-swap then still succeeds only if the slot holds the same
 * word, and the resume checks the key again after taking (taken in
 * error, the record is put back).
 */
#define FROZEN ((uintptr_t)1)
#define TAG_SHIFT 1
#define TAG_MASK ((uintptr_t)15 << TAG_SHIFT)
#define BUCKET ELT_TABLE_BUCKET
#define MIN_TABLE_BITS ELT_TABLE_MIN_BITS
#define MIGRATE_STEP ELT_TABLE_MIGRATE_STEP
_Static_assert((FROZEN | TAG_MASK) < ELT_RECORD_ALIGN &&
	       _Alignof(struct elt_invocation_record) == ELT_RECORD_ALIGN,
	       "a slot's tag and mark fit below a record's alignment");

struct table {
	size_t mask;                            /* slots - 1 */
	struct table *_Atomic older;            /* being emptied into this one */
	_Atomic size_t migrate_next, migrated;  /* in the older table */
	/* A bucket is a whole cache line (or half of one on 32-bit ports). */
	_Alignas(64) _Atomic uintptr_t slots[];
};

static struct table *_Atomic current_table;
#if defined(ELT_TEST_HOOKS)
void (*elt_test_hook)(enum elt_test_point point, uintptr_t continuation);
#endif

/* Records that moved while the table grew and found no room (above):
 * record addresses, 0 when free.  Its own cache line, written rarely:
 * every suspension reads `overflowing`, every resume `rehomed`. */
#define OVERFLOW_SLOTS 64
static struct {
	_Alignas(64) _Atomic unsigned overflowing;     /* records in it */
	/* Records moved back into the table so far: a resume that missed
	 * scans again when it changed meanwhile (overflow_rehome). */
	_Atomic unsigned long rehomed;
	_Atomic uintptr_t slots[OVERFLOW_SLOTS];
} overflow;
/* A table is being mapped: one thread maps, the others wait for it. */
static atomic_flag growing = ATOMIC_FLAG_INIT;

/* Where a continuation may live in a table: two buckets and a tag. */
struct place {
	size_t bucket[2];
	uintptr_t tag;
};

static inline struct place place_of(const struct table *t, uintptr_t continuation)
{
	uint64_t h1 = elt_continuation_hash1(continuation);
	uint64_t h2 = elt_continuation_hash2(continuation);

	return (struct place){
		.bucket = { (size_t)elt_continuation_bucket(h1, t->mask),
			    (size_t)elt_continuation_bucket(h2, t->mask) },
		.tag = (uintptr_t)(h1 >> 60) << TAG_SHIFT,
	};
}

static inline struct elt_invocation_record *record_of(uintptr_t word)
{
	return (struct elt_invocation_record *)(word & ~(uintptr_t)(ELT_RECORD_ALIGN - 1));
}

/* The record in `word` if it is published (not frozen) under `p`'s tag
 * and this continuation. */
static inline int holds(uintptr_t word, const struct place *p, uintptr_t continuation)
{
	struct elt_invocation_record *r = record_of(word);

	return r && (word & (TAG_MASK | FROZEN)) == p->tag &&
	       atomic_load_explicit(&r->continuation, memory_order_relaxed) == continuation;
}

static size_t table_bytes(size_t slots)
{
	return sizeof(struct table) + slots * sizeof(uintptr_t);
}

static struct table *map_table(size_t slots)
{
	struct table *t = elt_pages_map(table_bytes(slots));

#if defined(MADV_HUGEPAGE)
	/* Every access is at a random place: with 4 KiB pages, beyond a few
	 * megabytes each one also misses the TLB.  Only a hint. */
	if (t && table_bytes(slots) >= ((size_t)2 << 20))
		madvise(t, table_bytes(slots), MADV_HUGEPAGE);
#endif

	if (t)
		t->mask = slots - 1;
	return t;
}

/* The table, mapped on the first suspension; NULL when out of memory. */
static struct table *table_now(void)
{
	struct table *t = atomic_load_explicit(&current_table, memory_order_acquire);
	struct table *fresh;

	if (ELT_LIKELY(t))
		return t;
	if (!(fresh = map_table((size_t)1 << MIN_TABLE_BITS)))
		return NULL;
	if (!atomic_compare_exchange_strong_explicit(&current_table, &t, fresh,
						     memory_order_acq_rel,
						     memory_order_acquire)) {
		elt_pages_unmap(fresh, table_bytes((size_t)1 << MIN_TABLE_BITS));
		return t;
	}
	return fresh;
}

/* One bucket at a glance, one load per slot and no dereference: its empty
 * slots, and the ones whose tag says they may hold this continuation. */
struct glance {
	uint32_t empty, suspects;       /* bit i: slot i */
	unsigned room;                  /* empty slots */
	int frozen;                     /* a slot is */
};
_Static_assert(BUCKET <= 32, "a bucket's slots fit a glance's masks");

static inline struct glance glance_at(struct table *t, size_t bucket, uintptr_t tag)
{
	struct glance g = { 0, 0, 0, 0 };
	uint32_t bit = 1;
	unsigned i;

	/* Unrolled, an empty slot on the straight path: a load, a test and
	 * two adds each, of the sixteen slots a suspension glances at. */
#pragma GCC unroll 8
	for (i = 0; i < BUCKET; i++, bit <<= 1) {
		uintptr_t word = atomic_load_explicit(&t->slots[bucket + i],
						      memory_order_relaxed);

		if (ELT_LIKELY(!word)) {
			g.empty |= bit;
			g.room++;
		} else if (!((word ^ tag) & (TAG_MASK | FROZEN))) {
			g.suspects |= bit;
		} else if (word & FROZEN) {
			g.frozen = 1;
		}
	}
	return g;
}

/* Thread t found r's invocation abandoned: counted, and queued for the
 * dispatcher to tell the plugins (elt_invocation_end).  The record is t's
 * alone now (off its stack, or taken out of the table). */
static void queue_abandoned(struct elt_thread_invocations *t, struct elt_invocation_record *r)
{
	atomic_fetch_add_explicit(&abandoned, 1, memory_order_relaxed);
	if (!r)
		return;                 /* out of memory for its record */
	r->next_free = t->abandoned;
	t->abandoned = r;
}

/* Removes from the bucket a record of `p`'s continuation that never
 * resumed: its invocation can no longer be resumed, since the runtime
 * reused the continuation; it is abandoned, to this thread, the one
 * publishing (a suspension, or a resume putting back what it took in
 * error), which runs a segment.  The slots it frees join g->empty. */
static void drop_stale(struct table *t, size_t bucket, const struct place *p,
		       uintptr_t continuation, struct glance *g)
{
	uint32_t left;

	/* Each suspect loaded again with acquire (the glance's loads were
	 * relaxed) before its record is read. */
	for (left = g->suspects; left; left &= left - 1) {
		unsigned i = (unsigned)__builtin_ctz(left);
		_Atomic uintptr_t *slot = &t->slots[bucket + i];
		uintptr_t old = atomic_load_explicit(slot, memory_order_acquire);

		if (holds(old, p, continuation) &&
		    atomic_compare_exchange_strong_explicit(slot, &old, 0, memory_order_acquire,
							    memory_order_relaxed)) {
			atomic_store_explicit(&record_of(old)->continuation, 0,
					      memory_order_relaxed);
			queue_abandoned(elt_thread.invocations, record_of(old));
			g->empty |= (uint32_t)1 << i;
			g->room++;
		}
	}
}

/* Stores `word` in one of the slots of `bucket` that `empty` says were
 * empty: 1, 0 if others filled them all meanwhile, -1 if one is frozen. */
static int place_in(struct table *t, size_t bucket, uint32_t empty, uintptr_t word)
{
	for (; empty; empty &= empty - 1) {
		_Atomic uintptr_t *slot = &t->slots[bucket + (unsigned)__builtin_ctz(empty)];
		uintptr_t old = 0;

		if (atomic_compare_exchange_strong_explicit(slot, &old, word, memory_order_release,
							    memory_order_relaxed))
			return 1;
		if (old & FROZEN)
			return -1;
	}
	return 0;
}

/*
 * Puts `r` (whose continuation is set) into the emptier of its buckets in
 * `t`: 1, or 0 when both are full, or -1 when `t` is frozen there (no
 * longer current: try again).  With `stale` (a publication), a record of
 * the same continuation met on the way is dropped first (drop_stale),
 * rather than confused with the new one.  A suspension costs one glance at
 * each bucket and one compare-and-swap, on a slot seen empty.
 */
static int insert_into(struct table *t, struct elt_invocation_record *r, int stale)
{
	uintptr_t continuation = atomic_load_explicit(&r->continuation, memory_order_relaxed);
	struct place p = place_of(t, continuation);
	uintptr_t word = (uintptr_t)r | p.tag;
	unsigned buckets = p.bucket[1] == p.bucket[0] ? 1 : 2, b, pass;

	for (;;) {
		struct glance g[2] = { { 0, 0, 0, 0 }, { 0, 0, 0, 0 } };
		int placed;

		for (b = 0; b < buckets; b++) {
			g[b] = glance_at(t, p.bucket[b], p.tag);
			if (g[b].frozen)
				return -1;
			if (stale && g[b].suspects)
				drop_stale(t, p.bucket[b], &p, continuation, &g[b]);
		}
		if (!g[0].room && !g[1].room)
			return 0;
		/* The emptier first; the other if others filled it meanwhile. */
		b = g[1].room > g[0].room;
		for (pass = 0; pass < 2; pass++, b ^= 1) {
			placed = place_in(t, p.bucket[b], g[b].empty, word);
			if (placed)
				return placed;
		}
		/* Every slot seen empty was taken meanwhile: look again. */
	}
}

/*
 * The overflow (above).  A word is checked before it is taken out: the
 * record it names may have been resumed, reused and put back in the same
 * slot since it was read.  The checker claims the word first (CLAIMED:
 * bit 0, free in a record's address), which keeps the record in place,
 * then reads its key: a match is taken out, any other record is put back
 * as it was.  A resume meeting a claimed word scans again, as it does for
 * a frozen one.
 */
#define CLAIMED ((uintptr_t)1)
_Static_assert(CLAIMED < ELT_RECORD_ALIGN, "the claim fits below a record's alignment");

enum overflow_scan { OVERFLOW_MISS, OVERFLOW_TAKEN, OVERFLOW_BUSY };

/* 1 when r is in the overflow, 0 when it is full. */
static int overflow_put(struct elt_invocation_record *r)
{
	unsigned i;

	atomic_fetch_add_explicit(&overflow.overflowing, 1, memory_order_relaxed);
	for (i = 0; i < OVERFLOW_SLOTS; i++) {
		uintptr_t empty = 0;

		if (atomic_compare_exchange_strong_explicit(&overflow.slots[i], &empty,
							    (uintptr_t)r,
							    memory_order_release,
							    memory_order_relaxed))
			return 1;
	}
	atomic_fetch_sub_explicit(&overflow.overflowing, 1, memory_order_relaxed);
	return 0;
}

/* Empties a claimed slot whose record was taken.  Release: a resume that
 * sees the slot empty, or none in the overflow, sees what came before
 * (a move back's count). */
static void overflow_remove(_Atomic uintptr_t *slot)
{
	atomic_store_explicit(slot, 0, memory_order_release);
	atomic_fetch_sub_explicit(&overflow.overflowing, 1, memory_order_release);
}

/* Takes out of the overflow, into *out, a record of this continuation and
 * function (any function with `stale`: a suspension of the same
 * continuation makes an unresumed one stale, as drop_stale does in the
 * table).  OVERFLOW_BUSY: none found, but one of this continuation was
 * claimed meanwhile. */
static enum overflow_scan overflow_take(uintptr_t continuation, elt_function_id function,
					int stale, struct elt_invocation_record **out)
{
	enum overflow_scan found = OVERFLOW_MISS;
	unsigned i;

	for (i = 0; i < OVERFLOW_SLOTS; i++) {
		_Atomic uintptr_t *slot = &overflow.slots[i];
		uintptr_t word = atomic_load_explicit(slot, memory_order_acquire);
		struct elt_invocation_record *r =
			(struct elt_invocation_record *)(word & ~CLAIMED);

		/* records are never unmapped: a key read is safe, if stale */
		if (!r || atomic_load_explicit(&r->continuation, memory_order_relaxed) !=
			  continuation)
			continue;
		if ((word & CLAIMED) ||
		    !atomic_compare_exchange_strong_explicit(slot, &word, word | CLAIMED,
							     memory_order_acquire,
							     memory_order_relaxed)) {
			ELT_TEST_POINT(ELT_POINT_OVERFLOW_BUSY, continuation);
			found = OVERFLOW_BUSY;  /* claimed or taken: look again */
			continue;
		}
		/* Claimed: the record stays, and its key with it. */
		if (atomic_load_explicit(&r->continuation, memory_order_relaxed) ==
		    continuation &&
		    (stale || atomic_load_explicit(&r->function, memory_order_relaxed) ==
			      function)) {
			overflow_remove(slot);
			*out = r;
			return OVERFLOW_TAKEN;
		}
		atomic_store_explicit(slot, word, memory_order_release);
	}
	return found;
}

static inline int overflowing(void)
{
	return atomic_load_explicit(&overflow.overflowing, memory_order_acquire) != 0;
}

static int insert_into(struct table *t, struct elt_invocation_record *r, int stale);

/* Once a migration is done, the overflow's records move into the table,
 * twice as large now, so that the overflow stays free for the next one
 * and resumes stop scanning it.  This is against a resume's order (the
 * table, then the overflow): one may miss a record in the table before
 * it arrives and in the overflow after it left.  So each move counts in
 * `rehomed` before the record leaves the overflow, and a resume that
 * missed scans again if the count changed meanwhile (take). */
static void overflow_rehome(struct table *t)
{
	unsigned i;

	for (i = 0; i < OVERFLOW_SLOTS; i++) {
		_Atomic uintptr_t *slot = &overflow.slots[i];
		uintptr_t word = atomic_load_explicit(slot, memory_order_acquire);

		if (!word || (word & CLAIMED) ||
		    !atomic_compare_exchange_strong_explicit(slot, &word, word | CLAIMED,
							     memory_order_acquire,
							     memory_order_relaxed))
			continue;
		ELT_TEST_POINT(ELT_POINT_REHOME_CLAIMED,
			       atomic_load_explicit(&((struct elt_invocation_record *)word)->
						    continuation, memory_order_relaxed));
		if (insert_into(t, (struct elt_invocation_record *)word, 0) == 1) {
			ELT_TEST_POINT(ELT_POINT_REHOME_INSERTED,
				       atomic_load_explicit(&((struct elt_invocation_record *)word)->
							    continuation, memory_order_relaxed));
			atomic_fetch_add_explicit(&overflow.rehomed, 1, memory_order_release);
			overflow_remove(slot);
		} else
			atomic_store_explicit(slot, word, memory_order_release);
	}
}

/* Moves one slot of `t`'s older table into `t` (see above). */
static void migrate_slot(struct table *t, _Atomic uintptr_t *slot)
{
	uintptr_t word = atomic_load_explicit(slot, memory_order_acquire);

	while (!atomic_compare_exchange_weak_explicit(slot, &word, word | FROZEN,
						      memory_order_acq_rel,
						      memory_order_acquire))
		;
	if (word)
		ELT_TEST_POINT(ELT_POINT_MIGRATE_FROZEN,
			       atomic_load_explicit(&record_of(word)->continuation,
						    memory_order_relaxed));
	if (word && insert_into(t, record_of(word), 0) != 1 &&
	    !overflow_put(record_of(word))) {
		atomic_store_explicit(&record_of(word)->continuation, 0, memory_order_relaxed);
		atomic_fetch_add_explicit(&unpublished, 1, memory_order_relaxed);
	}
	/* Release: a resume that sees the slot left sees where it went. */
	atomic_store_explicit(slot, FROZEN, memory_order_release);
}

/* While `t` has an older table: moves the next MIGRATE_STEP of its slots,
 * and detaches it once all have moved.  0: nothing left to claim. */
static int help_migrate(struct table *t)
{
	struct table *old = atomic_load_explicit(&t->older, memory_order_acquire);
	size_t size, from, i, n;

	if (!old)
		return 0;
	size = old->mask + 1;
	from = atomic_fetch_add_explicit(&t->migrate_next, MIGRATE_STEP,
					 memory_order_relaxed);
	if (from >= size)
		return 0;               /* all claimed; their movers finish */
	n = size - from < MIGRATE_STEP ? size - from : MIGRATE_STEP;
	for (i = 0; i < n; i++)
		migrate_slot(t, &old->slots[from + i]);
	if (atomic_fetch_add_explicit(&t->migrated, n, memory_order_acq_rel) + n == size) {
		atomic_store_explicit(&t->older, NULL, memory_order_release);
		if (overflowing())
			overflow_rehome(t);
	}
	return 1;
}

/* `t` is full for some continuation: moves its older table out first, or
 * makes a table twice as large current.  0 when out of memory. */
static int make_room(struct table *t)
{
	size_t slots = (t->mask + 1) * 2;
	struct table *bigger;
	int room = 1;

	if (atomic_load_explicit(&t->older, memory_order_acquire)) {
		if (!help_migrate(t))
			sched_yield();  /* others finish their chunks */
		return 1;
	}
	if (atomic_flag_test_and_set_explicit(&growing, memory_order_acquire)) {
		sched_yield();          /* another thread maps the next one */
		return 1;
	}
	ELT_TEST_POINT(ELT_POINT_GROWING, 0);
	/* Only the holder of `growing` replaces a current table, so `t` is
	 * either still current or was replaced by a thread that found it
	 * full too and finished before this one got here: then there is
	 * room already, in the new table. */
	if (atomic_load_explicit(&current_table, memory_order_acquire) == t) {
		if ((bigger = map_table(slots))) {
			atomic_store_explicit(&bigger->older, t, memory_order_relaxed);
			atomic_store_explicit(&current_table, bigger, memory_order_release);
		} else {
			room = 0;       /* out of memory */
		}
	}
	atomic_flag_clear_explicit(&growing, memory_order_release);
	return room;
}

/* A suspension: `r` waits in the table under `continuation`.  On the
 * thread of a segment, whose queue gets what it abandons. */
static void publish(struct elt_invocation_record *r, uintptr_t continuation)
{
	struct table *t;

	if (ELT_UNLIKELY(overflowing())) {
		struct elt_invocation_record *stale;
		enum overflow_scan o;

		/* one of the same continuation claimed: it may be stale too */
		while ((o = overflow_take(continuation, 0, 1, &stale)) == OVERFLOW_BUSY)
			sched_yield();
		if (o == OVERFLOW_TAKEN) {
			atomic_store_explicit(&stale->continuation, 0, memory_order_relaxed);
			queue_abandoned(elt_thread.invocations, stale);
		}
	}
	atomic_store_explicit(&r->continuation, continuation, memory_order_relaxed);
	while ((t = table_now())) {
		int placed;

		help_migrate(t);
		placed = insert_into(t, r, 1);
		if (placed == 1)
			return;
		if (placed == 0 && !make_room(t))
			break;
	}
	atomic_store_explicit(&r->continuation, 0, memory_order_relaxed);
	atomic_fetch_add_explicit(&unpublished, 1, memory_order_relaxed);
}

/* What a scan of one table found. */
enum scan { SCAN_MISS, SCAN_TAKEN, SCAN_MOVING };

static enum scan take_from(struct table *t, uintptr_t continuation,
			   elt_function_id function, struct elt_invocation_record **out)
{
	struct place p = place_of(t, continuation);
	enum scan found = SCAN_MISS;
	unsigned b, i;

	for (b = 0; b < 2; b++) {
		for (i = 0; i < BUCKET; i++) {
			_Atomic uintptr_t *slot = &t->slots[p.bucket[b] + i];
			uintptr_t word = atomic_load_explicit(slot, memory_order_acquire);
			struct elt_invocation_record *r = record_of(word);

			if (!holds(word & ~FROZEN, &p, continuation) ||
			    atomic_load_explicit(&r->function, memory_order_relaxed) != function)
				continue;
			if (word & FROZEN) {
				found = SCAN_MOVING;
				continue;
			}
			if (atomic_compare_exchange_strong_explicit(slot, &word, 0,
								    memory_order_acquire,
								    memory_order_relaxed)) {
				*out = r;
				return SCAN_TAKEN;
			}
			/* Frozen since the load: it is moving, so not missed. */
			if (word & FROZEN)
				found = SCAN_MOVING;
		}
		if (p.bucket[1] == p.bucket[0])
			break;
	}
	return found;
}

/* The suspended invocation of `function` waiting under `continuation`,
 * taken out of the table; NULL when there is none. */
static struct elt_invocation_record *take(uintptr_t continuation,
					  elt_function_id function)
{
	struct elt_invocation_record *r;
	struct table *t, *old;
	enum scan s;

	for (;;) {
		unsigned long rehomed = atomic_load_explicit(&overflow.rehomed,
							     memory_order_acquire);

		if (!(t = atomic_load_explicit(&current_table, memory_order_acquire)))
			return NULL;
		old = atomic_load_explicit(&t->older, memory_order_acquire);
		s = old ? take_from(old, continuation, function, &r) : SCAN_MISS;
		if (s == SCAN_MISS)
			s = take_from(t, continuation, function, &r);
		if (s == SCAN_MISS)
			ELT_TEST_POINT(ELT_POINT_TAKE_MISSED, continuation);
		if (s == SCAN_MISS && ELT_UNLIKELY(overflowing()))
			switch (overflow_take(continuation, function, 0, &r)) {
			case OVERFLOW_TAKEN:
				s = SCAN_TAKEN;
				break;
			case OVERFLOW_BUSY:
				s = SCAN_MOVING;
				break;
			default:
				break;
			}
		if (s == SCAN_TAKEN) {
			/* Reused and published again meanwhile? */
			if (atomic_load_explicit(&r->continuation, memory_order_relaxed) ==
			    continuation &&
			    atomic_load_explicit(&r->function, memory_order_relaxed) ==
			    function)
				break;
			publish(r, atomic_load_explicit(&r->continuation,
							memory_order_relaxed));
			continue;
		}
		if (s == SCAN_MOVING)
			sched_yield();
		else if (atomic_load_explicit(&current_table, memory_order_acquire) == t &&
			 atomic_load_explicit(&overflow.rehomed, memory_order_acquire) ==
			 rehomed)
			return NULL;
	}
	atomic_store_explicit(&r->continuation, 0, memory_order_relaxed);
	return r;
}

/*
 * A resume whose continuation is not in the table yet may have overtaken
 * its suspension: a multithreaded dispatcher can run the continuation as
 * soon as the runtime has it, before the suspending thread's Leave helper
 * (and our publish, which follows that Leave's callbacks) is done.  The
 * resume then waits, yielding, so that it gets the same id and its
 * callbacks run after the suspension's.
 *
 * It waits only on evidence: the suspension it may be waiting for is a
 * segment of an async function running now on another thread.  So it
 * notes, per shard of threads, how many such segments run and how many
 * have ended; once every shard has ended as many as it was running, none
 * of those can publish any more, and the resume is an orphan.  With no
 * async segment running elsewhere (a continuation of another runtime,
 * one whose suspension was never seen or overflowed) it is one at once.
 * The count is a lower bound on the wait, not an exact one: a shard whose
 * threads end newer segments first lets go early, and the wait never
 * exceeds resume_wait_ns in any case.
 */
static int64_t elapsed_ns(const struct timespec *from)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return (int64_t)(now.tv_sec - from->tv_sec) * 1000000000 + (now.tv_nsec - from->tv_nsec);
}

struct evidence {
	uint32_t running[ELT_ASYNC_SHARDS], ended[ELT_ASYNC_SHARDS];
};

/* Notes the segments running elsewhere now; 0 when there are none. */
static int note_evidence(const struct elt_thread_invocations *self, struct evidence *ev)
{
	unsigned own = self->index % ELT_ASYNC_SHARDS, i;
	int any = 0;

	for (i = 0; i < ELT_ASYNC_SHARDS; i++) {
		ev->ended[i] = atomic_load_explicit(&elt_async_shards[i].ended,
						    memory_order_acquire);
		/* Acquire: a segment seen no longer running has published
		 * (elt_async_segment_ended), even when its end is not seen. */
		ev->running[i] = atomic_load_explicit(&elt_async_shards[i].running,
						      memory_order_acquire);
		if (i == own)   /* ours cannot end while we wait */
			ev->running[i] -= ev->running[i] >= self->async_running
				? self->async_running : ev->running[i];
		any |= ev->running[i] != 0;
	}
	return any;
}

/* 1 while one of the noted segments may still be running. */
static int evidence_holds(struct evidence *ev)
{
	unsigned i;

	for (i = 0; i < ELT_ASYNC_SHARDS; i++) {
		uint32_t ended;

		if (!ev->running[i])
			continue;
		ended = atomic_load_explicit(&elt_async_shards[i].ended,
					     memory_order_acquire);
		if (ended - ev->ended[i] < ev->running[i])
			return 1;
		ev->running[i] = 0;
	}
	return 0;
}

static struct elt_invocation_record *take_waiting(const struct elt_thread_invocations *self,
						  uintptr_t continuation,
						  elt_function_id function)
{
	struct elt_invocation_record *r = take(continuation, function);
	struct timespec start;
	struct evidence ev;
	int more;

	if (ELT_LIKELY(r) || resume_wait_ns == 0)
		return r;
	/*
	 * Take again after the note, whatever it says: the suspension may
	 * have published, and ended, between the take above and the note,
	 * which then counts it neither as running nor as still to end (with
	 * nothing else running, no wait at all), yet it is in the table.  A
	 * segment the note does not count as running has published before
	 * (elt_async_segment_ended), so this take finds it.
	 */
	more = note_evidence(self, &ev);
	r = take(continuation, function);
	if (!r && more) {
		atomic_fetch_add_explicit(&waiting_resumes, 1, memory_order_relaxed);
		clock_gettime(CLOCK_MONOTONIC, &start);
		do {
			sched_yield();
			/* Read before the take: a segment seen ending has published. */
			more = evidence_holds(&ev);
			r = take(continuation, function);
		} while (!r && more && elapsed_ns(&start) < resume_wait_ns);
		atomic_fetch_sub_explicit(&waiting_resumes, 1, memory_order_relaxed);
	}
	if (r)
		atomic_fetch_add_explicit(&early_resumes, 1, memory_order_relaxed);
	return r;
}

/* --- records ---------------------------------------------------------------
 *
 * Records are carved from chunks mapped once and never unmapped (a resume
 * scanning the table may read a record another thread has just taken and
 * reused, and elt_foreach_live_invocation walks them all).  A thread takes
 * ELT_RECORDS_PER_BLOCK at a time; one that holds too many free ones
 * gives a batch back to `spare_batches`, a lock-free stack: any thread
 * pushes, and only the holder of `popping` pops, which is what keeps the
 * pop free of the ABA problem (a batch cannot leave and come back between
 * its reading the top and its compare-and-swap).  A thread that finds
 * `popping` held carves from a chunk instead of waiting.
 */
#define CHUNK_RECORDS 4096

struct record_chunk {
	struct record_chunk *next;              /* older chunks */
	_Atomic uint32_t carved;                /* records handed out (may pass
						   CHUNK_RECORDS) */
	/* Plugin p's invocation storage for these records, storage_size[p]
	 * bytes each, mapped when first asked for. */
	unsigned char *_Atomic storage[ELT_MAX_PLUGINS];
	struct elt_invocation_record records[CHUNK_RECORDS];
};
_Static_assert(CHUNK_RECORDS <= UINT16_MAX + 1, "a record's index fits its uint16_t");

/* Each plugin's invocation_storage, rounded up to 16 (plugin.c sets it
 * before the plugin's first segment). */
static uint32_t storage_size[ELT_MAX_PLUGINS];

static struct record_chunk *_Atomic chunks;     /* newest first */
static struct elt_invocation_record *_Atomic spare_batches;
static atomic_flag popping = ATOMIC_FLAG_INIT;

static void push_batch(struct elt_invocation_record *first)
{
	struct elt_invocation_record *top =
		atomic_load_explicit(&spare_batches, memory_order_relaxed);

	do
		first->next_batch = top;
	while (!atomic_compare_exchange_weak_explicit(&spare_batches, &top, first,
						      memory_order_release,
						      memory_order_relaxed));
}

static struct elt_invocation_record *pop_batch(void)
{
	struct elt_invocation_record *top;

	if (atomic_flag_test_and_set_explicit(&popping, memory_order_acquire))
		return NULL;
	top = atomic_load_explicit(&spare_batches, memory_order_acquire);
	while (top && !atomic_compare_exchange_weak_explicit(&spare_batches, &top,
							     top->next_batch,
							     memory_order_acquire,
							     memory_order_acquire))
		;
	atomic_flag_clear_explicit(&popping, memory_order_release);
	return top;
}

/* Up to ELT_RECORDS_PER_BLOCK fresh records onto t's free list. */
static void carve(struct elt_thread_invocations *t)
{
	for (;;) {
		struct record_chunk *c = atomic_load_explicit(&chunks, memory_order_acquire);
		struct record_chunk *fresh;
		uint32_t from, i;

		if (c && (from = atomic_fetch_add_explicit(&c->carved, ELT_RECORDS_PER_BLOCK,
							   memory_order_relaxed)) <
			 CHUNK_RECORDS) {
			for (i = from; i < from + ELT_RECORDS_PER_BLOCK && i < CHUNK_RECORDS; i++) {
				c->records[i].chunk = c;
				c->records[i].index = (uint16_t)i;
				c->records[i].next_free = t->free_records;
				t->free_records = &c->records[i];
				t->free_count++;
			}
			return;
		}
		if (!(fresh = elt_pages_map(sizeof(*fresh))))
			return;
		fresh->next = c;
		if (!atomic_compare_exchange_strong_explicit(&chunks, &c, fresh,
							     memory_order_release,
							     memory_order_relaxed))
			elt_pages_unmap(fresh, sizeof(*fresh));   /* another thread's is there */
	}
}

/* Rare: this thread's free list is empty. */
static void refill(struct elt_thread_invocations *t)
{
	struct elt_invocation_record *batch = pop_batch(), *r;

	if (!batch) {
		carve(t);
		return;
	}
	for (r = batch; r; r = r->next_free) {
		t->free_count++;
		if (!r->next_free) {
			r->next_free = t->free_records;
			break;
		}
	}
	t->free_records = batch;
}

/* Gives `count` of this thread's free records back, as one batch. */
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
	last->next_free = NULL;
	push_batch(first);
}

/* Rare: this thread's block of ids is used up.  Returns the first id of
 * the new block. */
elt_invocation_id elt_invocation_id_block(struct elt_thread_invocations *t)
{
	t->next_id = atomic_fetch_add_explicit(&next_id_block, ID_BLOCK,
					       memory_order_relaxed);
	t->end_id = t->next_id + ID_BLOCK;
	return t->next_id++;
}

static void storage_to_record(struct elt_thread_invocations *t,
			      const struct elt_shadow_entry *e, struct elt_invocation_record *r);

/* The record of the invocation of entry `e` (one of this thread's stack),
 * made when it must outlive its segment, when a plugin asks for its slot,
 * or when it is an orphan; NULL when out of memory.  Its parent is the
 * entry below, as long as the invocation is in its first segment. */
static struct elt_invocation_record *materialize(struct elt_thread_invocations *t,
						 struct elt_shadow_entry *e,
						 const struct elt_function *fn)
{
	struct elt_invocation_record *r = t->free_records;
	uint32_t d = (uint32_t)(e - t->stack);

	if (e->record)
		return e->record;
	if (ELT_UNLIKELY(!r)) {
		int saved_errno = errno;        /* refill may map memory */

		refill(t);
		errno = saved_errno;
		if (!(r = t->free_records))
			return NULL;
	}
	t->free_records = r->next_free;
	t->free_count--;

	r->inv.id = e->id;
	r->inv.parent = d ? t->stack[d - 1].id : 0;
	r->inv.segment = 0;
	r->inv.flags = elt_is_async(fn) ? ELT_INVOCATION_ASYNC : 0;
	r->inv.thread = r->inv.previous_thread = t->index;
	atomic_store_explicit(&r->function, e->function, memory_order_relaxed);
	r->fn = fn;
	r->slots_valid = 0;
	r->storage_ready = 0;
	r->told = 0;
	if (ELT_UNLIKELY(e->storage_ready))
		storage_to_record(t, e, r);
	/* Release: elt_foreach_live_invocation reads the fields above
	 * after an acquire load of `live`. */
	atomic_store_explicit(&r->live, 1, memory_order_release);
	e->record = r;
	return r;
}

void elt_invocation_free(struct elt_thread_invocations *t, struct elt_invocation_record *r)
{
	atomic_store_explicit(&r->live, 0, memory_order_relaxed);
	r->next_free = t->free_records;
	t->free_records = r;
	if (ELT_UNLIKELY(++t->free_count > ELT_MAX_FREE_RECORDS))
		give_back(t, ELT_RECORDS_PER_BLOCK);
}

/* Rare: deeper than ever on this thread.  Mapped, not realloc'd: this
 * runs on the segment path. */
int elt_invocation_grow(struct elt_thread_invocations *t)
{
	uint32_t capacity = t->capacity * 2;
	int saved_errno = errno;
	struct elt_shadow_entry *stack = elt_pages_map(capacity * sizeof(*stack));

	if (stack) {
		memcpy(stack, t->stack, t->depth * sizeof(*stack));
		elt_pages_unmap(t->stack, t->capacity * sizeof(*stack));
		t->stack = stack;
		t->capacity = capacity;
	}
	errno = saved_errno;
	return stack != NULL;
}

/* An entry leaves the stack without its Leave: it will never end.  Its
 * record, made now if it had none (NULL when out of memory). */
static struct elt_invocation_record *abandon_entry(struct elt_thread_invocations *t,
						   struct elt_shadow_entry *e)
{
	const struct elt_function *fn = elt_registry_lookup(e->function);
	struct elt_invocation_record *r = materialize(t, e, fn);

	if (elt_is_async(fn))
		elt_async_segment_ended(t);
	return r;
}

/* The invocation a Leave or Tailcall of `function` ends when it is not
 * the innermost: the innermost of that function on this thread.  Those
 * above it were left without their Leave (an exception unwound through
 * them): they are taken off the stack and abandoned, queued outermost
 * first, so that the plugins hear of the innermost first. */
struct elt_shadow_entry *
elt_invocation_match_deeper(struct elt_thread_invocations *t, elt_function_id function)
{
	uint32_t d = t->depth, i;

	while (d && t->stack[d - 1].function != function)
		d--;
	if (d == 0) {
		atomic_fetch_add_explicit(&unbalanced_leaves, 1, memory_order_relaxed);
		return NULL;
	}
	/* Each made into a record while the entries below it, its parents,
	 * are still there. */
	for (i = d; i < t->depth; i++)
		queue_abandoned(t, abandon_entry(t, &t->stack[i]));
	t->depth = d;
	return &t->stack[d - 1];
}

struct elt_invocation_record *elt_invocation_next_abandoned(struct elt_thread_invocations *t)
{
	struct elt_invocation_record *r = t->abandoned;

	if (r)
		t->abandoned = r->next_free;
	return r;
}

void elt_invocation_forget(struct elt_thread_invocations *t, struct elt_invocation_record *r)
{
	atomic_fetch_add_explicit(&forgotten, 1, memory_order_relaxed);
	elt_invocation_free(t, r);
}

/* A resume: the invocation that suspended with this continuation, or a
 * new one flagged orphan. */
struct elt_shadow_entry *elt_invocation_resume(struct elt_thread_invocations *t,
					       const struct elt_info *info)
{
	int saved_errno = errno;        /* the wait's system calls */
	struct elt_invocation_record *r = take_waiting(t, elt_info_continuation(info), info->head.id);
	struct elt_shadow_entry *e;

	errno = saved_errno;
	if (ELT_LIKELY(r)) {
		r->inv.segment++;
		r->inv.previous_thread = r->inv.thread;
		r->inv.thread = t->index;
		e = elt_invocation_push(t, info->head.id, r->inv.id, r);
		if (e)
			elt_async_segment_started(t);
		return e;
	}
	atomic_fetch_add_explicit(&orphan_resumes, 1, memory_order_relaxed);
	elt_invocation_count(&t->started);
	e = elt_invocation_push(t, info->head.id,
				t->next_id != t->end_id ? t->next_id++
							: elt_invocation_id_block(t),
				NULL);
	if (e && (r = materialize(t, e, elt_info_function(info)))) {
		r->inv.parent = 0;      /* whoever awaited it is unknown */
		r->inv.segment = 1;     /* a resume, of unknown rank */
		r->inv.flags |= ELT_INVOCATION_ORPHAN;
	}
	if (e)
		elt_async_segment_started(t);
	return e;
}

/* After a suspension's callbacks (its entry already popped): its record
 * waits in the table for the resume. */
void elt_invocation_suspend(struct elt_thread_invocations *t, struct elt_shadow_entry *e,
			    const struct elt_info *info)
{
	struct elt_invocation_record *r = materialize(t, e, elt_info_function(info));
	int saved_errno = errno;        /* growing the table maps memory */

	if (r)
		publish(r, elt_info_continuation(info));
	else
		atomic_fetch_add_explicit(&unpublished, 1, memory_order_relaxed);
	errno = saved_errno;
	/* After the publication: a resume waiting on this segment's end
	 * then finds it (take_waiting). */
	elt_async_segment_ended(t);
}

/* --- threads ------------------------------------------------------------- */

/* One page (a segment's first on a thread may come from a signal
 * handler: mapped, not malloc'd). */
#define INITIAL_STACK (4096 / sizeof(struct elt_shadow_entry))

int elt_invocation_thread_init(struct elt_thread_invocations *t)
{
	int saved_errno = errno;

	t->stack = elt_pages_map(INITIAL_STACK * sizeof(*t->stack));
	errno = saved_errno;
	if (!t->stack)
		return 0;
	t->capacity = INITIAL_STACK;
	t->index = atomic_fetch_add_explicit(&thread_count, 1, memory_order_relaxed) + 1;
	return 1;
}

/* The shadow stack and the storage stacks beside it. */
static void unmap_stacks(struct elt_thread_invocations *t)
{
	unsigned p;

	for (p = 0; p < ELT_MAX_PLUGINS; p++) {
		elt_pages_unmap(t->storage[p], (size_t)t->storage_capacity[p] * storage_size[p]);
		t->storage[p] = NULL;
		t->storage_capacity[p] = 0;
	}
	elt_pages_unmap(t->stack, t->capacity * sizeof(*t->stack));
	t->stack = NULL;
	t->depth = t->capacity = 0;
}

void elt_invocation_thread_exit(struct elt_thread_invocations *t)
{
	uint32_t d;

	/* What is still on the stack never completes: it stays live, in a
	 * record, for elt_foreach_live_invocation. */
	for (d = t->depth; d > 0; d--)
		abandon_entry(t, &t->stack[d - 1]);
	atomic_fetch_add(&exited_started,
			 atomic_load_explicit(&t->started, memory_order_relaxed));
	atomic_fetch_add(&exited_completed,
			 atomic_load_explicit(&t->completed, memory_order_relaxed));
	give_back(t, t->free_count);
	unmap_stacks(t);
}

void elt_invocation_thread_forget(struct elt_thread_invocations *t)
{
	uint64_t started = atomic_load_explicit(&t->started, memory_order_relaxed);

	/* Its async segments will never end: elt_invocations_after_fork_child
	 * counts the shards again without them, so no resume waits for them.
	 * What it started stays counted, as an exited thread's: what it
	 * suspended may resume and complete in the child.  What was running
	 * on it is the parent's alone, not counted at all. */
	atomic_fetch_add(&exited_started, started > t->depth ? started - t->depth : 0);
	atomic_fetch_add(&exited_completed,
			 atomic_load_explicit(&t->completed, memory_order_relaxed));
	/* Its records and stack are the parent's history: the records stay
	 * where they are, unused. */
	unmap_stacks(t);
}

/*
 * fork(): the child has only the thread that forked, which was not in
 * this file (no thread forks from inside a segment).  Any other thread's
 * step through the table stops there half done, forever: a `growing` or
 * `popping` flag held, a word claimed in the overflow, a migration whose
 * chunks were claimed but never finished, a slot frozen with its record
 * on the way.  Waiting for such a step would stall the child (a resume
 * meeting a frozen record or a claim yields until it is gone; a full
 * table waits for the one who grows it).  So the child, alone, finishes
 * or undoes each of them here.
 */

static int in_table(struct table *t, struct elt_invocation_record *r)
{
	struct place p = place_of(t, atomic_load_explicit(&r->continuation,
							  memory_order_relaxed));
	unsigned b, i;

	for (b = 0; b < 2; b++)
		for (i = 0; i < BUCKET; i++)
			if (record_of(atomic_load_explicit(&t->slots[p.bucket[b] + i],
							   memory_order_relaxed)) == r)
				return 1;
	return 0;
}

/* Whether `r` is in an overflow slot other than `except`. */
static int in_overflow(struct elt_invocation_record *r, const _Atomic uintptr_t *except)
{
	unsigned i;

	for (i = 0; i < OVERFLOW_SLOTS; i++)
		if (&overflow.slots[i] != except &&
		    (atomic_load_explicit(&overflow.slots[i], memory_order_relaxed) &
		     ~CLAIMED) == (uintptr_t)r)
			return 1;
	return 0;
}

/* Whether the record of a word claimed in the overflow at the fork still
 * waits there, and only there.  Its claimer may have been a resume
 * looking (the record stays), or a move back into the table
 * (overflow_rehome) that had inserted it already, into `t` or into the
 * table that has grown into `t` since; a resume may even have taken it
 * out of the table since (its continuation is 0), or a new suspension
 * of the same record published it again. */
static int claimed_still_waits(struct table *t, struct table *old,
			       struct elt_invocation_record *r,
			       const _Atomic uintptr_t *slot)
{
	return atomic_load_explicit(&r->continuation, memory_order_relaxed) &&
	       !(t && in_table(t, r)) && !(old && in_table(old, r)) && !in_overflow(r, slot);
}

void elt_invocations_after_fork_child(const struct elt_thread_invocations *self)
{
	struct table *t = atomic_load_explicit(&current_table, memory_order_acquire);
	struct table *old = t ? atomic_load_explicit(&t->older, memory_order_acquire) : NULL;
	unsigned held = 0;
	size_t i;

	/* The async segments running are the forking thread's alone.  Not
	 * the shards less the other threads' counts: a fork between the two
	 * steps of elt_async_segment_started or _ended on one of them left
	 * its count and its shard's apart, and a shard one too high made
	 * every orphan resume in the child wait its whole bound. */
	for (i = 0; i < ELT_ASYNC_SHARDS; i++)
		atomic_store_explicit(&elt_async_shards[i].running, 0, memory_order_relaxed);
	if (self)
		atomic_store_explicit(&elt_async_shard_of(self)->running, self->async_running,
				      memory_order_relaxed);

	atomic_flag_clear_explicit(&growing, memory_order_relaxed);
	atomic_flag_clear_explicit(&popping, memory_order_relaxed);
	/* A claim lets go of its record, which stays if it still waits there. */
	for (i = 0; i < OVERFLOW_SLOTS; i++) {
		_Atomic uintptr_t *slot = &overflow.slots[i];
		uintptr_t word = atomic_load_explicit(slot, memory_order_relaxed);
		struct elt_invocation_record *r = (struct elt_invocation_record *)(word & ~CLAIMED);

		if ((word & CLAIMED) && !claimed_still_waits(t, old, r, slot))
			word = 0;
		atomic_store_explicit(slot, word & ~CLAIMED, memory_order_relaxed);
		held += word != 0;
	}
	/* A put may have counted a record it never stored. */
	atomic_store_explicit(&overflow.overflowing, held, memory_order_relaxed);
	if (!old)
		return;
	/* The whole migration, here: a slot not yet frozen moves as usual; a
	 * frozen one still holding its record moves unless it arrived. */
	for (i = 0; i <= old->mask; i++) {
		_Atomic uintptr_t *slot = &old->slots[i];
		uintptr_t word = atomic_load_explicit(slot, memory_order_relaxed);
		struct elt_invocation_record *r = record_of(word);

		if (!(word & FROZEN)) {
			migrate_slot(t, slot);
			continue;
		}
		if (r && atomic_load_explicit(&r->continuation, memory_order_relaxed) &&
		    !in_table(t, r) && !in_overflow(r, NULL) && insert_into(t, r, 0) != 1 &&
		    !overflow_put(r)) {
			atomic_store_explicit(&r->continuation, 0, memory_order_relaxed);
			atomic_fetch_add_explicit(&unpublished, 1, memory_order_relaxed);
		}
		atomic_store_explicit(slot, FROZEN, memory_order_relaxed);
	}
	atomic_store_explicit(&t->older, NULL, memory_order_release);
	if (overflowing())
		overflow_rehome(t);
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
	resume_wait_ns = ms * INT64_C(1000000);
}

/* --- the public getters -------------------------------------------------- */

elt_status elt_get_invocation(const elt_info *info, elt_invocation *out)
{
	const struct elt_shadow_entry *e = info->invocation;
	const struct elt_thread_invocations *t = elt_thread.invocations;
	uint32_t d;

	if (!out)
		return elt_set_error(ELT_E_INVALID_ARGUMENT, "elt_get_invocation: out is NULL");
	if (!e || !t) {
		/* no invocation, yet the thread is still known when tracked */
		memset(out, 0, sizeof(*out));
		if (t)
			out->thread = out->previous_thread = t->index;
		return ELT_E_DATAINCOMPLETE;
	}
	if (e->record) {
		*out = e->record->inv;
		return ELT_OK;
	}
	/* Still in its first segment, on this thread: its parent is the
	 * entry below. */
	d = (uint32_t)(e - t->stack);
	out->id = e->id;
	out->parent = d ? t->stack[d - 1].id : 0;
	out->segment = 0;
	out->flags = elt_is_async(elt_info_function(info)) ? ELT_INVOCATION_ASYNC : 0;
	out->thread = out->previous_thread = t->index;
	return ELT_OK;
}

void **elt_get_invocation_slot(const elt_info *info)
{
	struct elt_shadow_entry *e = info->invocation;
	struct elt_thread_invocations *t = elt_thread.invocations;
	struct elt_invocation_record *r;

	if (!e || !t || !(r = materialize(t, e, elt_info_function(info))))
		return NULL;
	/* Cleared on first use rather than when the record is made; only
	 * the thread running the invocation's segment touches them. */
	while (r->slots_valid <= info->head.plugin)
		r->slots[r->slots_valid++] = NULL;
	return &r->slots[info->head.plugin];
}

void elt_invocations_set_storage(unsigned plugin, uint32_t size)
{
	storage_size[plugin] = (size + 15) & ~15u;
}

/* Plugin p's storage area of chunk c, mapped on first use; NULL when out
 * of memory.  Two threads may map it at once: one keeps its own. */
static unsigned char *storage_area(struct record_chunk *c, unsigned p)
{
	unsigned char *area = atomic_load_explicit(&c->storage[p], memory_order_acquire);
	unsigned char *expected = NULL;
	size_t size = (size_t)storage_size[p] * CHUNK_RECORDS;
	int saved_errno;

	if (ELT_LIKELY(area))
		return area;
	saved_errno = errno;    /* mapping may set it; a signal handler may be here */
	if ((area = elt_pages_map(size)) &&
	    !atomic_compare_exchange_strong_explicit(&c->storage[p], &expected, area,
						     memory_order_acq_rel,
						     memory_order_acquire)) {
		elt_pages_unmap(area, size);
		area = expected;
	}
	errno = saved_errno;
	return area;
}

/* r's storage for plugin p, zeroed if not yet for this invocation (make),
 * or NULL (no storage asked for, none made yet, out of memory).  Only the
 * thread running the invocation's segment, or fini once none runs, calls
 * this: storage_ready needs no atomics. */
static void *record_storage(struct elt_invocation_record *r, unsigned p, int make)
{
	unsigned char *area, *s;

	if (!storage_size[p] || (!make && !(r->storage_ready & (1u << p))))
		return NULL;
	if (!(area = storage_area(r->chunk, p)))
		return NULL;
	s = area + (size_t)r->index * storage_size[p];
	if (!(r->storage_ready & (1u << p))) {
		memset(s, 0, storage_size[p]);
		r->storage_ready |= (uint16_t)(1u << p);
	}
	return s;
}

void *elt_invocation_plugin_data(struct elt_invocation_record *r, unsigned plugin)
{
	if (storage_size[plugin])
		return record_storage(r, plugin, 0);
	return plugin < r->slots_valid ? r->slots[plugin] : NULL;
}

/* Rare, out of line: plugin p's storage stack of this thread grows to
 * as deep as the shadow stack can hold.  0 when out of memory. */
static __attribute__((noinline, cold)) int grow_storage_stack(struct elt_thread_invocations *t,
							      unsigned p)
{
	size_t size = storage_size[p];
	int saved_errno = errno;
	unsigned char *grown = elt_pages_map((size_t)t->capacity * size);

	errno = saved_errno;
	if (!grown)
		return 0;
	if (t->storage[p]) {
		memcpy(grown, t->storage[p], (size_t)t->storage_capacity[p] * size);
		elt_pages_unmap(t->storage[p], (size_t)t->storage_capacity[p] * size);
	}
	t->storage[p] = grown;
	t->storage_capacity[p] = t->capacity;
	return 1;
}

/* Plugin p's storage for entry e of this thread's stack, which has no
 * record: in the thread's storage stack, zeroed if not yet for this
 * invocation (make), or NULL (not made yet, out of memory).  Only the
 * thread itself calls this, or fini once none runs. */
static void *stack_storage(struct elt_thread_invocations *t, struct elt_shadow_entry *e,
			   unsigned p, int make)
{
	uint32_t d = (uint32_t)(e - t->stack), size = storage_size[p];

	if (!(e->storage_ready & (1u << p))) {
		if (!make)
			return NULL;
		if (ELT_UNLIKELY(d >= t->storage_capacity[p]) && !grow_storage_stack(t, p))
			return NULL;
		e->storage_ready |= (uint16_t)(1u << p);
		/* memset returns it: a tail call, so no frame to keep */
		return memset(t->storage[p] + (size_t)d * size, 0, size);
	}
	return t->storage[p] + (size_t)d * size;
}

/* The invocation of e gets a record (fresh: no storage of its own yet):
 * the storage made so far moves there, for the plugins that made one. */
static void storage_to_record(struct elt_thread_invocations *t,
			      const struct elt_shadow_entry *e, struct elt_invocation_record *r)
{
	uint32_t d = (uint32_t)(e - t->stack);
	unsigned ready, p;
	unsigned char *area;

	for (ready = e->storage_ready; ready; ready &= ready - 1) {
		p = (unsigned)__builtin_ctz(ready);
		if (!(area = storage_area(r->chunk, p)))
			continue;       /* out of memory: that plugin's is lost */
		memcpy(area + (size_t)r->index * storage_size[p],
		       t->storage[p] + (size_t)d * storage_size[p], storage_size[p]);
		r->storage_ready |= (uint16_t)(1u << p);
	}
}

/* elt_get_invocation_storage's first request in an invocation (or in its
 * first segment since it got a record): the storage is made, zeroed. */
static __attribute__((noinline)) void *make_invocation_storage(struct elt_shadow_entry *e,
							       unsigned p)
{
	struct elt_thread_invocations *t = elt_thread.invocations;

	if (!storage_size[p] || !e || !t)
		return NULL;
	/* In its first segment, on this thread: no record needed. */
	if (!e->record)
		return stack_storage(t, e, p, 1);
	return record_storage(e->record, p, 1);
}

void *elt_get_invocation_storage(const elt_info *info)
{
	struct elt_shadow_entry *e = info->invocation;
	unsigned p = info->head.plugin;
	const struct elt_invocation_record *r;

	/* In its first segment, on this thread (the usual case): no call,
	 * no frame, and the first request zeroes the storage right here. */
	if (ELT_LIKELY(e && !e->record)) {
		struct elt_thread_invocations *t = elt_thread.invocations;
		uint32_t d = (uint32_t)(e - t->stack), size = storage_size[p];
		unsigned char *s = t->storage[p] + (size_t)d * size;

		if (ELT_LIKELY(e->storage_ready & (1u << p)))
			return s;
		if (ELT_LIKELY(size && d < t->storage_capacity[p])) {
			e->storage_ready |= (uint16_t)(1u << p);
			return memset(s, 0, size);
		}
		return make_invocation_storage(e, p);
	}
	if (ELT_LIKELY(e && (r = e->record) && (r->storage_ready & (1u << p))))
		return atomic_load_explicit(&r->chunk->storage[p], memory_order_acquire) +
		       (size_t)r->index * storage_size[p];
	return make_invocation_storage(e, p);
}

static void add_thread(struct elt_thread_invocations *t, void *arg)
{
	elt_invocation_stats *s = arg;

	s->started += atomic_load_explicit(&t->started, memory_order_relaxed);
	s->completed += atomic_load_explicit(&t->completed, memory_order_relaxed);
}

void elt_get_invocation_stats(elt_invocation_stats *out)
{
	uint64_t gone;

	if (!out)
		return;
	memset(out, 0, sizeof(*out));
	elt_threads_foreach(add_thread, out);
	/* After the live threads: a thread exiting meanwhile is counted at
	 * most twice, never missed. */
	out->started += atomic_load(&exited_started);
	out->completed += atomic_load(&exited_completed);
	/* Counters of different threads are read at different times: one
	 * invocation's completion may be seen without its start.  Forgotten
	 * abandoned invocations never complete, yet are no longer live. */
	gone = out->completed + atomic_load(&forgotten);
	out->live = out->started > gone ? out->started - gone : 0;
	out->orphan_resumes = atomic_load(&orphan_resumes);
	out->early_resumes = atomic_load(&early_resumes);
	out->unbalanced_leaves = atomic_load(&unbalanced_leaves);
	out->abandoned = atomic_load(&abandoned);
	out->unpublished = atomic_load(&unpublished);
	out->waiting_resumes = atomic_load(&waiting_resumes);
}

/*
 * Invocations still in their first segment have no record: they live on
 * their threads' shadow stacks, which a thread's exit unmaps, so they are
 * read with the thread list locked.  Not the plugin's fn, though: code
 * that takes a lock of its own under the thread list's would deadlock
 * with a fork, whose handlers take the plugin's locks first (registered
 * later, they run earlier) and the thread list's last.  So they are
 * copied out, each with a copy of the plugin's storage, and listed after.
 */
struct first_segment {
	elt_invocation inv;
	const elt_function_desc *function;
	void *slot;
};

struct first_segments {
	unsigned plugin;
	size_t count, room;
	struct first_segment *list;
	unsigned char *storage;         /* storage_size[plugin] per entry */
};

static void count_first_segments(struct elt_thread_invocations *t, void *arg)
{
	struct first_segments *copy = arg;
	uint32_t d;

	for (d = 0; d < t->depth; d++)
		copy->count += !t->stack[d].record; /* those with one: records */
}

static void copy_first_segments(struct elt_thread_invocations *t, void *arg)
{
	struct first_segments *copy = arg;
	size_t size = storage_size[copy->plugin];
	uint32_t d;

	for (d = 0; d < t->depth && copy->count < copy->room; d++) {
		struct elt_shadow_entry *e = &t->stack[d];
		const struct elt_function *fn;
		void *slot;

		if (e->record)
			continue;
		fn = elt_registry_lookup(e->function);
		slot = size ? stack_storage(t, e, copy->plugin, 0) : NULL;
		copy->list[copy->count] = (struct first_segment){
			.inv = {
				.id = e->id,
				.parent = d ? t->stack[d - 1].id : 0,
				.flags = fn && (fn->desc.flags & ELT_FUNCTION_ASYNC)
					? ELT_INVOCATION_ASYNC : 0,
				.thread = t->index,
				.previous_thread = t->index,
			},
			.function = fn ? &fn->desc : NULL,
			.slot = slot ? memcpy(copy->storage + copy->count * size, slot, size) : NULL,
		};
		copy->count++;
	}
}

static int by_id(const void *a, const void *b)
{
	uint64_t x = ((const struct first_segment *)a)->inv.id;
	uint64_t y = ((const struct first_segment *)b)->inv.id;

	return x < y ? -1 : x > y;
}

/* Was the invocation of this id listed among the copies (sorted by id)? */
static int listed_first(const struct first_segments *copy, uint64_t id)
{
	struct first_segment key = { .inv = { .id = id } };

	return copy->count && bsearch(&key, copy->list, copy->count, sizeof(key), by_id);
}

/* elt_foreach_live_invocation for the plugin in table slot `plugin`
 * (plugin.c finds it). */
void elt_invocations_foreach_live(unsigned plugin, elt_live_invocation_fn fn, void *arg)
{
	struct first_segments copy = { .plugin = plugin };
	size_t entry = sizeof(*copy.list) + storage_size[plugin], bytes, i;
	unsigned carved;
	struct record_chunk *c;
	void *pages;

	elt_threads_foreach(count_first_segments, &copy);
	/* No instrumented thread runs (the contract): the count holds. */
	copy.room = copy.count;
	copy.count = 0;
	bytes = copy.room * entry;
	pages = bytes ? elt_pages_map(bytes) : NULL;
	if (bytes && !pages) {
		elt_set_error(ELT_E_NO_MEMORY, "elt_foreach_live_invocation: out of memory");
		return;
	}
	/* storage first: its size is a multiple of 16 */
	if (pages) {
		copy.storage = pages;
		copy.list = (struct first_segment *)(copy.storage +
						     copy.room * storage_size[plugin]);
		elt_threads_foreach(copy_first_segments, &copy);
	}
	if (copy.count)
		qsort(copy.list, copy.count, sizeof(*copy.list), by_id);
	for (i = 0; i < copy.count; i++)
		fn(&copy.list[i].inv, copy.list[i].function, copy.list[i].slot, arg);

	/* Then every record that is live: chunks are never unmapped, and
	 * those carved first are the ones further down the list.  A thread
	 * that exited since the copy (threads may end at any moment, the
	 * walk's fn running meanwhile) moved its first segments into records:
	 * those were listed already. */
	for (c = atomic_load_explicit(&chunks, memory_order_acquire); c; c = c->next) {
		carved = atomic_load_explicit(&c->carved, memory_order_relaxed);
		if (carved > CHUNK_RECORDS)
			carved = CHUNK_RECORDS;
		for (i = 0; i < carved; i++) {
			struct elt_invocation_record *r = &c->records[i];

			if (atomic_load_explicit(&r->live, memory_order_acquire) &&
			    !(r->told & (1u << plugin)) && !listed_first(&copy, r->inv.id))
				fn(&r->inv, r->fn ? &r->fn->desc : NULL,
				   elt_invocation_plugin_data(r, plugin), arg);
		}
	}
	elt_pages_unmap(pages, bytes);
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
		elt_report("%llu suspensions could not be published (out of memory "
			   "for the continuation table or a record, or its overflow "
			   "full): their resumes were orphans",
			   (unsigned long long)s.unpublished);
}
