/*
 * Logical invocations through the real helpers (tests/probes.h): ids and
 * parents with nesting, a call suspended on one thread and resumed on
 * others, the per-plugin slot, and the hazards:
 *  (a) a resume reported while the suspending thread is held just before
 *      its Leave: it must still get the same id;
 *  (b) a continuation address reused, after a resume or without one;
 *  (c) invocations that never complete: counted, reported at shutdown,
 *      listed to the plugin's fini;
 *  (d) a resume of a continuation never seen suspending: an orphan, at
 *      once when no async segment runs elsewhere, else as soon as those
 *      that ran when it looked have ended (never ASYNCELT_RESUME_WAIT_MS);
 *  (e) a Leave with nothing on its thread's stack, and one that skips
 *      frames (an unwind);
 * and many threads suspending and resuming each other's calls, with the
 * resume racing the suspension's Leave.
 */
#define ELT_PLUGIN_STATIC 1
#include "tap.h"
#include "probes.h"

#include <asyncelt.h>
#include <asyncelt/plugin.h>

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static const elt_function_id ASYNC_ID = 0x100, PLAIN_ID = 0x200, OTHER_ID = 0x300;

/* --- the test plugin: what each thread's last callback saw --------------- */

struct seen {
	elt_segment_kind kind;
	elt_status st;
	elt_invocation inv;
	void **slot;
	void *slot_value;       /* what the slot held on entry */
	unsigned long order;    /* when the callback ran, among all threads */
};

static _Thread_local struct seen last;
static _Atomic unsigned long callbacks;
/* A value the plugin stores in the slot at each call: the invocation's id
 * (as the stress test checks at each resume). */
static int store_id_in_slot;
static _Atomic unsigned long slot_mismatches;

static void observe(const elt_info *info, void *state)
{
	(void)state;
	last.kind = elt_get_segment_kind(info);
	last.st = elt_get_invocation(info, &last.inv);
	last.slot = elt_get_invocation_slot(info);
	last.slot_value = last.slot ? *last.slot : (void *)1;
	last.order = atomic_fetch_add(&callbacks, 1);
	if (!store_id_in_slot || !last.slot)
		return;
	if (last.kind == ELT_SEGMENT_CALL)
		*last.slot = (void *)(uintptr_t)last.inv.id;
	else if (last.slot_value != (void *)(uintptr_t)last.inv.id)
		atomic_fetch_add(&slot_mismatches, 1);
}

/* What the fini's enumeration found. */
#define MAX_LISTED 64
static elt_invocation listed[MAX_LISTED];
static void *listed_slot[MAX_LISTED];
static const elt_function_desc *listed_fn[MAX_LISTED];
static unsigned nlisted;

static void list_one(const elt_invocation *inv, const elt_function_desc *fn, void *slot,
		     void *arg)
{
	(void)arg;
	if (nlisted < MAX_LISTED) {
		listed[nlisted] = *inv;
		listed_fn[nlisted] = fn;
		listed_slot[nlisted] = slot;
	}
	nlisted++;
}

extern const elt_plugin elt_plugin_observer;

static elt_status observer_fini(void *state)
{
	(void)state;
	elt_foreach_live_invocation(&elt_plugin_observer, list_one, NULL);
	return ELT_OK;
}

ELT_PLUGIN_DEFINE(observer, .enter = observe, .leave = observe, .tailcall = observe,
		  .fini = observer_fini);

/* A second plugin: the slots are per plugin. */
static _Thread_local void **other_slot;
static void other_cb(const elt_info *info, void *state)
{
	(void)state;
	other_slot = elt_get_invocation_slot(info);
}
ELT_PLUGIN_DEFINE(other, .enter = other_cb);

/* --- segments through the probes ----------------------------------------- */

static int64_t zero(void)
{
	return 0;
}

/* probe_function and probe_continuation are globals: threads that report
 * Leaves at the same time take this lock.  Enters pass everything in
 * arguments, and every thread reports the same function, set once. */
static pthread_mutex_t leave_lock = PTHREAD_MUTEX_INITIALIZER;

static struct seen enter(elt_function_id id, uintptr_t k)
{
	probe_function = id;
	PROBE_AS(void (*)(uintptr_t, int32_t), probe_enter)(k, 1);
	return last;
}

static struct seen enter_async(uintptr_t k)
{
	PROBE_AS(void (*)(uintptr_t, int32_t), probe_enter)(k, 1);
	return last;
}

static struct seen leave_through(elt_function_id id, uintptr_t k, int64_t (*before)(void))
{
	pthread_mutex_lock(&leave_lock);
	probe_function = id;
	probe_target = (void (*)(void))before;
	probe_continuation = k;
	PROBE_AS(int64_t (*)(void), probe_leave)();
	pthread_mutex_unlock(&leave_lock);
	return last;
}

static struct seen leave(elt_function_id id, uintptr_t k)
{
	return leave_through(id, k, zero);
}

static elt_invocation_stats stats(void)
{
	elt_invocation_stats s;

	elt_get_invocation_stats(&s);
	return s;
}

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* --- nesting, slots, one thread ------------------------------------------ */

static void test_nesting(void)
{
	elt_invocation_stats s0 = stats(), s1;
	struct seen a, b, b_end, a_end;
	static int payload;

	a = enter(ASYNC_ID, 0);
	b = enter(PLAIN_ID, 0);
	ok(a.st == ELT_OK && b.st == ELT_OK && a.inv.id && b.inv.id && a.inv.id != b.inv.id,
	   "two nested calls: distinct non-zero ids");
	is_int(a.inv.parent, 0, "the outer call has no parent");
	ok(b.inv.parent == a.inv.id, "the inner call's parent is the outer call");
	ok(a.inv.flags == ELT_INVOCATION_ASYNC && b.inv.flags == 0,
	   "flags: ASYNC for the async function only");
	ok(a.inv.segment == 0 && a.inv.thread >= 1 && a.inv.previous_thread == a.inv.thread,
	   "a call: segment 0, this thread, previous thread the same");
	ok(b.slot && b.slot_value == NULL, "a new invocation's slot is NULL");
	*b.slot = &payload;
	ok(other_slot && other_slot != b.slot, "each plugin has its own slot");
	b_end = leave(PLAIN_ID, 0);
	ok(b_end.kind == ELT_SEGMENT_RETURN && b_end.inv.id == b.inv.id &&
	   b_end.slot_value == &payload, "the return: same invocation, the slot kept");
	a_end = leave(ASYNC_ID, 0);
	ok(a_end.inv.id == a.inv.id && a_end.inv.parent == 0, "the outer return");
	s1 = stats();
	ok(s1.started - s0.started == 2 && s1.completed - s0.completed == 2,
	   "stats: 2 started, 2 completed");

	/* recursion: the innermost call of a function ends first */
	a = enter(PLAIN_ID, 0);
	b = enter(PLAIN_ID, 0);
	b_end = leave(PLAIN_ID, 0);
	a_end = leave(PLAIN_ID, 0);
	ok(b.inv.parent == a.inv.id && b_end.inv.id == b.inv.id && a_end.inv.id == a.inv.id,
	   "recursion: each Leave ends its own call");

	/* a tailcall ends the invocation; the callee is a new one */
	a = enter(ASYNC_ID, 0);
	b = enter(PLAIN_ID, 0);
	s0 = stats();
	probe_function = PLAIN_ID;
	PROBE_AS(void (*)(uintptr_t, int32_t), probe_tailcall)(0, 1);
	ok(last.kind == ELT_SEGMENT_TAILCALL && last.inv.id == b.inv.id,
	   "tailcall: reported in the invocation it ends");
	s1 = stats();
	is_int(s1.completed - s0.completed, 1, "tailcall: the invocation completed");
	b_end = enter(OTHER_ID, 0);
	ok(b_end.inv.parent == a.inv.id, "the tail-called function's parent is the caller's "
	   "caller");
	leave(OTHER_ID, 0);
	leave(ASYNC_ID, 0);
}

/* --- suspend and resume ---------------------------------------------------- */

static void test_same_thread(void)
{
	struct seen call, suspend, resume, ret;
	static int payload;

	call = enter(ASYNC_ID, 0);
	*call.slot = &payload;
	suspend = leave(ASYNC_ID, 0xa000);
	resume = enter(ASYNC_ID, 0xa000);
	ret = leave(ASYNC_ID, 0);
	ok(suspend.kind == ELT_SEGMENT_SUSPEND && suspend.inv.id == call.inv.id,
	   "suspension: the call's invocation");
	ok(resume.kind == ELT_SEGMENT_RESUME && resume.inv.id == call.inv.id &&
	   resume.inv.segment == 1, "resume on the same thread: same id, segment 1");
	ok(resume.slot_value == &payload, "resume: the slot stored at the call");
	ok(ret.inv.id == call.inv.id && ret.inv.segment == 1, "final return: same id");
}

struct hop {
	uintptr_t resume_k, suspend_k;  /* suspend_k 0: return instead */
	struct seen resume, end;
};

static void *hop_thread(void *arg)
{
	struct hop *h = arg;

	h->resume = enter_async(h->resume_k);
	h->end = leave(ASYNC_ID, h->suspend_k);
	return NULL;
}

static void run_hop(struct hop *h)
{
	pthread_t th;

	probe_function = ASYNC_ID;
	if (pthread_create(&th, NULL, hop_thread, h) || pthread_join(th, NULL))
		tap_bail("pthread_create failed");
}

static void test_threads(void)
{
	struct hop first = { .resume_k = 0xb000, .suspend_k = 0xb100 },
		   second = { .resume_k = 0xb100, .suspend_k = 0 };
	struct seen call;

	call = enter(ASYNC_ID, 0);
	leave(ASYNC_ID, 0xb000);
	run_hop(&first);
	run_hop(&second);
	ok(first.resume.inv.id == call.inv.id && second.resume.inv.id == call.inv.id &&
	   second.end.inv.id == call.inv.id, "resumed on two other threads: one id throughout");
	ok(first.resume.inv.segment == 1 && second.resume.inv.segment == 2,
	   "segments 1 and 2");
	ok(first.resume.inv.thread != call.inv.thread &&
	   first.resume.inv.previous_thread == call.inv.thread,
	   "first resume: another thread, previous thread the caller's");
	ok(second.resume.inv.previous_thread == first.resume.inv.thread &&
	   second.resume.inv.thread != first.resume.inv.thread,
	   "second resume: previous thread the first resume's");
	is_int(second.resume.inv.parent, 0, "the parent is kept (none here)");
}

/* (a): thread A is held inside probe_leave, before its Leave helper runs,
 * until thread B's resume of the same continuation is waiting. */
static struct seen race_resume;
static _Atomic int race_go;

/* At most 5 s: a resume that never waits fails the test, not hangs it. */
static int64_t hold_until_resume_waits(void)
{
	double start = now_ms();

	atomic_store(&race_go, 1);
	while (stats().waiting_resumes == 0 && now_ms() - start < 5000)
		sched_yield();
	return 0;
}

static void *race_resumer(void *arg)
{
	(void)arg;
	while (!atomic_load(&race_go))
		sched_yield();
	race_resume = enter_async(0xc000);
	leave(ASYNC_ID, 0);
	return NULL;
}

static void test_early_resume(void)
{
	elt_invocation_stats s0 = stats(), s1;
	struct seen call, suspend;
	pthread_t b;

	probe_function = ASYNC_ID;
	call = enter(ASYNC_ID, 0);
	if (pthread_create(&b, NULL, race_resumer, NULL))
		tap_bail("pthread_create failed");
	suspend = leave_through(ASYNC_ID, 0xc000, hold_until_resume_waits);
	pthread_join(b, NULL);
	s1 = stats();
	ok(race_resume.kind == ELT_SEGMENT_RESUME && race_resume.inv.id == call.inv.id,
	   "(a) a resume seen before the suspending Leave: the same id");
	ok(race_resume.order > suspend.order,
	   "(a) its callbacks ran after the suspension's");
	is_int(s1.early_resumes - s0.early_resumes, 1, "(a) counted as an early resume");
	is_int(s1.orphan_resumes - s0.orphan_resumes, 0, "(a) not an orphan");
}

/* (b) */
static void test_reuse(void)
{
	elt_invocation_stats s0, s1;
	struct seen first, second, resume, stale, fresh;

	first = enter(ASYNC_ID, 0);
	leave(ASYNC_ID, 0xd000);
	enter(ASYNC_ID, 0xd000);
	leave(ASYNC_ID, 0);
	second = enter(ASYNC_ID, 0);
	leave(ASYNC_ID, 0xd000);
	resume = enter(ASYNC_ID, 0xd000);
	leave(ASYNC_ID, 0);
	ok(resume.inv.id == second.inv.id && resume.inv.id != first.inv.id && resume.inv.segment == 1,
	   "(b) a continuation address reused after its resume: the new invocation");

	s0 = stats();
	stale = enter(ASYNC_ID, 0);
	leave(ASYNC_ID, 0xd100);                /* never resumed */
	fresh = enter(ASYNC_ID, 0);
	leave(ASYNC_ID, 0xd100);                /* the runtime reused it */
	resume = enter(ASYNC_ID, 0xd100);
	leave(ASYNC_ID, 0);
	s1 = stats();
	ok(resume.inv.id == fresh.inv.id && resume.inv.id != stale.inv.id,
	   "(b) reused without a resume between: the newest suspension");
	is_int(s1.abandoned - s0.abandoned, 1, "(b) the older one is counted abandoned");
	ok(s1.live == s0.live, "(b) ... and forgotten: no plugin holds anything for it "
	   "(tests/test-abandoned.c)");
}

/* (d) */
static void test_orphan(void)
{
	elt_invocation_stats s0 = stats(), s1;
	struct seen resume, ret;
	double start = now_ms(), took;

	resume = enter(ASYNC_ID, 0xe000);
	took = now_ms() - start;
	ret = leave(ASYNC_ID, 0);
	s1 = stats();
	/* The wait is 3 s here: an orphan that waited is unmistakable. */
	ok(took < 100, "(d) nothing async runs elsewhere: an orphan at once (%.3f ms)",
	   took);
	ok(resume.st == ELT_OK && resume.inv.id && (resume.inv.flags & ELT_INVOCATION_ORPHAN),
	   "(d) a resume of an unknown continuation: a new id, flagged orphan");
	ok(resume.inv.segment == 1 && resume.inv.parent == 0, "(d) segment 1, no parent");
	is_int(s1.orphan_resumes - s0.orphan_resumes, 1, "(d) counted");
	ok(ret.inv.id == resume.inv.id && s1.completed - s0.completed == 1,
	   "(d) its return completes it");
}

/* (d) with evidence: thread B runs a segment of the async function, so
 * an unknown continuation's resume waits, but only until B's segment ends
 * (a return: it publishes nothing); then it is an orphan at once. */
static _Atomic int b_running, b_release;
static _Atomic int saw_waiting;

static void *run_async_segment(void *arg)
{
	(void)arg;
	enter_async(0);
	atomic_store(&b_running, 1);
	while (!atomic_load(&b_release))
		sched_yield();
	leave(ASYNC_ID, 0);
	return NULL;
}

static void *end_it_later(void *arg)
{
	double start = now_ms();

	(void)arg;
	while (stats().waiting_resumes == 0 && now_ms() - start < 1000)
		sched_yield();
	atomic_store(&saw_waiting, stats().waiting_resumes != 0);
	nanosleep(&(struct timespec){ 0, 50 * 1000 * 1000 }, NULL);
	atomic_store(&b_release, 1);
	return NULL;
}

static void test_orphan_on_evidence(void)
{
	pthread_t b, c;
	struct seen resume;
	double start, took;

	probe_function = ASYNC_ID;
	if (pthread_create(&b, NULL, run_async_segment, NULL))
		tap_bail("pthread_create failed");
	while (!atomic_load(&b_running))
		sched_yield();
	if (pthread_create(&c, NULL, end_it_later, NULL))
		tap_bail("pthread_create failed");
	start = now_ms();
	resume = enter_async(0xe100);
	took = now_ms() - start;
	leave(ASYNC_ID, 0);
	pthread_join(b, NULL);
	pthread_join(c, NULL);
	ok(atomic_load(&saw_waiting) && (resume.inv.flags & ELT_INVOCATION_ORPHAN),
	   "(d) an async segment runs elsewhere: the resume waits for it, then is an orphan");
	ok(took >= 40 && took < 1000,
	   "(d) ... and stops waiting when that segment ends (%.1f ms; the limit is 3 s)",
	   took);
}

/* (e) */
static struct seen stray;
static void *stray_leave(void *arg)
{
	(void)arg;
	stray = leave(PLAIN_ID, 0);
	return NULL;
}

static void test_unbalanced(void)
{
	elt_invocation_stats s0 = stats(), s1;
	struct seen outer, ret;
	pthread_t th;

	if (pthread_create(&th, NULL, stray_leave, NULL) || pthread_join(th, NULL))
		tap_bail("pthread_create failed");
	s1 = stats();
	ok(stray.kind == ELT_SEGMENT_RETURN && stray.st == ELT_E_DATAINCOMPLETE &&
	   stray.inv.id == 0 && stray.slot == NULL,
	   "(e) a Leave on a thread with no Enter: no invocation, no slot");
	ok(stray.inv.thread >= 1 && stray.inv.previous_thread == stray.inv.thread,
	   "(e) ... yet its thread's index (%u)", stray.inv.thread);
	is_int(s1.unbalanced_leaves - s0.unbalanced_leaves, 1, "(e) counted");

	s0 = stats();
	outer = enter(ASYNC_ID, 0);
	enter(PLAIN_ID, 0);                     /* unwound: no Leave */
	ret = leave(ASYNC_ID, 0);
	s1 = stats();
	ok(ret.inv.id == outer.inv.id, "(e) a Leave skipping a frame ends its own call");
	is_int(s1.abandoned - s0.abandoned, 1, "(e) the skipped frame is counted abandoned");
}

/* --- many threads --------------------------------------------------------
 * Producers call and suspend, and hand the continuation over before their
 * Leave has run (from inside the probe, as a multithreaded dispatcher
 * does); consumers, waiting for it, resume and return.  The slot holds the
 * id stored at the call: every later segment checks it. */

#define PRODUCERS 2
#define CONSUMERS 2
#define STRESS_ROUNDS 500
#define QUEUE_SIZE 64

static pthread_mutex_t queue_lock = PTHREAD_MUTEX_INITIALIZER;
static uintptr_t queue[QUEUE_SIZE];
static unsigned queue_head, queue_tail;
static _Atomic unsigned consumed;
static _Thread_local uintptr_t handing_over;
static _Atomic unsigned long orphans_seen;

static unsigned queue_length(void)
{
	unsigned n;

	pthread_mutex_lock(&queue_lock);
	n = queue_tail - queue_head;
	pthread_mutex_unlock(&queue_lock);
	return n;
}

static int64_t hand_over(void)
{
	pthread_mutex_lock(&queue_lock);
	queue[queue_tail++ % QUEUE_SIZE] = handing_over;
	pthread_mutex_unlock(&queue_lock);
	return 0;
}

/* Until a consumer has taken it (or a while): its resume then races our
 * Leave more often than not. */
static int64_t hand_over_and_linger(void)
{
	unsigned n;

	hand_over();
	for (n = 0; n < 200 && queue_length() > 0; n++)
		sched_yield();
	return 0;
}

static uintptr_t take_one(void)
{
	uintptr_t k = 0;

	pthread_mutex_lock(&queue_lock);
	if (queue_head != queue_tail)
		k = queue[queue_head++ % QUEUE_SIZE];
	pthread_mutex_unlock(&queue_lock);
	return k;
}

static void *producer(void *arg)
{
	uintptr_t base = (uintptr_t)arg;
	unsigned i;

	for (i = 0; i < STRESS_ROUNDS; i++) {
		enter_async(0);
		handing_over = base + i * 16;
		leave_through(ASYNC_ID, handing_over,
			      i % 2 ? hand_over_and_linger : hand_over);
		/* the queue never holds more than the consumers can take */
		while (queue_length() > QUEUE_SIZE / 2)
			sched_yield();
	}
	return NULL;
}

static void *consumer(void *arg)
{
	(void)arg;
	while (atomic_load(&consumed) < PRODUCERS * STRESS_ROUNDS) {
		uintptr_t k = take_one();
		struct seen resume;

		if (!k) {
			sched_yield();
			continue;
		}
		atomic_fetch_add(&consumed, 1);
		resume = enter_async(k);
		if (resume.st != ELT_OK || (resume.inv.flags & ELT_INVOCATION_ORPHAN))
			atomic_fetch_add(&orphans_seen, 1);
		leave(ASYNC_ID, 0);
	}
	return NULL;
}

static void test_stress(void)
{
	elt_invocation_stats s0 = stats(), s1;
	pthread_t th[PRODUCERS + CONSUMERS];
	unsigned i;

	probe_function = ASYNC_ID;
	store_id_in_slot = 1;
	for (i = 0; i < PRODUCERS + CONSUMERS; i++)
		if (pthread_create(&th[i], NULL, i < PRODUCERS ? producer : consumer,
				   (void *)(uintptr_t)(0x100000 * (i + 1))))
			tap_bail("pthread_create failed");
	for (i = 0; i < PRODUCERS + CONSUMERS; i++)
		pthread_join(th[i], NULL);
	store_id_in_slot = 0;
	s1 = stats();
	is_int(atomic_load(&slot_mismatches), 0,
	       "%d threads resuming %d others' calls: every later segment sees the id "
	       "its call stored in the slot", CONSUMERS, PRODUCERS);
	is_int(atomic_load(&orphans_seen), 0, "... and no resume is an orphan");
	ok(s1.started - s0.started == PRODUCERS * STRESS_ROUNDS &&
	   s1.completed - s0.completed == PRODUCERS * STRESS_ROUNDS,
	   "... %d started, as many completed", PRODUCERS * STRESS_ROUNDS);
	tap_diag("stress: %lu of the resumes overtook their suspension's Leave",
		 (unsigned long)(s1.early_resumes - s0.early_resumes));
}

/* --- (c), at shutdown ------------------------------------------------------ */

static char diagnostics[4096];
static void capture(const char *message, void *data)
{
	(void)data;
	strncat(diagnostics, message, sizeof(diagnostics) - strlen(diagnostics) - 2);
	strcat(diagnostics, "\n");
}

static struct seen exiting_call;
static void *exit_inside(void *arg)
{
	(void)arg;
	exiting_call = enter(PLAIN_ID, 0);     /* the thread ends inside it */
	*exiting_call.slot = (void *)0x5107;
	return NULL;
}

static int was_listed(elt_invocation_id id, void **slot)
{
	unsigned i;

	for (i = 0; i < nlisted && i < MAX_LISTED; i++)
		if (listed[i].id == id) {
			*slot = listed_slot[i];
			return 1;
		}
	return 0;
}

static void test_never_completed(void)
{
	elt_invocation_stats s;
	struct seen suspended, running;
	pthread_t th;
	void *slot = NULL;
	char expected[64];
	unsigned i;

	suspended = enter(ASYNC_ID, 0);
	*suspended.slot = (void *)0x5105;
	leave(ASYNC_ID, 0xf000);                /* never resumed */
	running = enter(OTHER_ID, 0);           /* never left */
	if (pthread_create(&th, NULL, exit_inside, NULL) || pthread_join(th, NULL))
		tap_bail("pthread_create failed");
	s = stats();

	elt_set_diagnostic_handler(capture, NULL);
	elt_shutdown();         /* the handler stays: replacing it keeps the old one */
	ok(nlisted == s.live, "(c) fini lists every live invocation (%u, %llu live)",
	   nlisted, (unsigned long long)s.live);
	ok(was_listed(suspended.inv.id, &slot) && slot == (void *)0x5105,
	   "(c) a suspension never resumed is listed, with the plugin's slot");
	ok(was_listed(running.inv.id, &slot) && slot == NULL,
	   "(c) a call still running is listed (no slot asked for it)");
	ok(was_listed(exiting_call.inv.id, &slot) && slot == (void *)0x5107,
	   "(c) a call whose thread exited inside it is listed");
	for (i = 0; i < nlisted && i < MAX_LISTED && listed[i].id != running.inv.id; i++)
		;
	ok(i < nlisted && i < MAX_LISTED && listed_fn[i] && listed_fn[i]->id == OTHER_ID &&
	   listed[i].parent == 0, "(c) listed with its function");
	snprintf(expected, sizeof(expected), "%llu invocations never completed",
		 (unsigned long long)s.live);
	ok(strstr(diagnostics, expected) != NULL, "(c) shutdown reports \"%s\"", expected);
	ok(strstr(diagnostics, "resumes of a continuation never seen suspending"),
	   "(d) shutdown reports the orphans");
	ok(strstr(diagnostics, "matched no Enter"), "(e) shutdown reports the unbalanced Leave");
	if (!ok(s.live >= 3, "(c) at least the three left running are live"))
		tap_diag("diagnostics: %s", diagnostics);
}

int main(void)
{
	/* Generous: the race test's suspending thread must reach its Leave
	 * while the resume waits, even on a loaded machine or under qemu;
	 * only the orphan test waits the whole time.  Over 2147 ms, which
	 * in nanoseconds wrapped a 32-bit long (i386, arm, Win64): the
	 * resume did not wait at all. */
	putenv((char *)"ASYNCELT_RESUME_WAIT_MS=3000");
	tap_plan(55);
	if (elt_plugin_add(&elt_plugin_observer, NULL) != ELT_OK ||
	    elt_plugin_add(&elt_plugin_other, NULL) != ELT_OK ||
	    elt_register_function(ASYNC_ID, "Async", "l(K i)", ELT_FUNCTION_ASYNC) ||
	    elt_register_function(PLAIN_ID, "Plain", "l(p i)", 0) ||
	    elt_register_function(OTHER_ID, "Other", "l(p i)", 0))
		tap_bail("setup: %s", elt_last_error());

	test_nesting();
	test_same_thread();
	test_threads();
	test_early_resume();
	test_reuse();
	test_orphan();
	test_orphan_on_evidence();
	test_unbalanced();
	test_stress();
	test_never_completed();
	return tap_done();
}
