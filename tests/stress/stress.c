/*
 * The long stress run (`make stress`, tests/stress/run-stress.sh): 8
 * threads emit async invocations through the producer API, each suspended
 * on one thread and resumed on whichever thread takes it next, under the
 * counting, check, logging (text, JSON and binary) and timing-with-trace
 * plugins at once.
 * Then it checks what must hold exactly:
 *
 *   - the library's counters: every invocation started completed, no
 *     orphan resume, no unbalanced Leave, none abandoned or unpublished;
 *   - the check plugin's verdict (expect=Work:N,Leaf:M): elt_shutdown() is OK;
 *   - every segment's line is in each log exactly once, and its record in
 *     the binary recording: per invocation, its call, each suspension,
 *     each resume and its return, with the segment numbers and kinds the
 *     workload made, and nothing else;
 *
 * and prints the throughput.  The trace is checked afterwards by
 * tests/check-trace.py (run-stress.sh).  A segment here is one callback
 * (call, suspend, resume or return): one line of each log.
 *
 *     stress DIR        writes its logs, counts and trace in DIR
 *     stress --check DIR   only reads back the logs of an earlier run
 *                       (the same STRESS_SEGMENTS): to see the checks fail
 *     STRESS_SEGMENTS   how many segments (default 10000000)
 *     STRESS_THREADS    how many threads (default 8)
 */
#include "../../tools/dump/read.h"
#include "../../plugins/logging/recording.h"

#include <asyncelt.h>
#include <asyncelt/plugin.h>

#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define WORK_ID ((elt_function_id)0x1000)
#define LEAF_ID ((elt_function_id)0x2000)
#define MAX_SUSPENSIONS 4
/* Invocations suspended at once, at most: well inside the continuation
 * table, so that every resume is stitched (issue 12 item 5 is the test of
 * millions). */
#define MAX_IN_FLIGHT 1024

/* The shape of task i: its suspensions, known again when the logs are read. */
static unsigned suspensions_of(uint64_t task)
{
	return 1 + (unsigned)(task % MAX_SUSPENSIONS);
}

/* Each Work segment (Enter..Leave) makes one Leaf call inside it: 4
 * callbacks; a task has one segment more than it suspends. */
static uint64_t segments_of(uint64_t task)
{
	return 4 * (uint64_t)(suspensions_of(task) + 1);
}

/* --- the workload ---------------------------------------------------------- */

/* A suspended invocation; its address is the continuation.  Slots are
 * reused once resumed to the end, as a runtime reuses its state machines. */
struct task {
	int32_t index;
	unsigned resumes_left;
	struct task *next;
};

static struct {
	pthread_mutex_t lock;
	pthread_cond_t ready;
	struct task *suspended_head, *suspended_tail;   /* FIFO: resumed in turn */
	struct task *free_slots;
	uint64_t next_task, tasks;
	unsigned running;       /* threads that may still suspend a task */
} pool = { .lock = PTHREAD_MUTEX_INITIALIZER, .ready = PTHREAD_COND_INITIALIZER };

static struct task slots[MAX_IN_FLIGHT];

static _Atomic uint64_t emit_failures;

static void check_emit(elt_status st)
{
	if (st != ELT_OK)
		atomic_fetch_add_explicit(&emit_failures, 1, memory_order_relaxed);
}

/* One Work segment's body: a synchronous Leaf call. */
static void leaf_call(int32_t x)
{
	void *const args[] = { &x };
	int32_t result = x * 2;

	check_emit(elt_emit_enter(LEAF_ID, args, NULL));
	check_emit(elt_emit_leave(LEAF_ID, &result, NULL));
}

/* Runs one segment of t, from its Enter to its Leave (a suspension or the
 * final return).  Returns 1 when t suspended. */
static int run_segment(struct task *t, int first)
{
	if (first) {
		void *const args[] = { &t->index };

		check_emit(elt_emit_enter(WORK_ID, args, NULL));
	} else {
		check_emit(elt_emit_enter(WORK_ID, NULL, t));
	}
	leaf_call(t->index);
	if (t->resumes_left-- > 0) {
		check_emit(elt_emit_leave(WORK_ID, NULL, t));
		return 1;
	} else {
		int64_t result = t->index;

		check_emit(elt_emit_leave(WORK_ID, &result, NULL));
		return 0;
	}
}

/* Takes the oldest suspended task, or a free slot for a new one; NULL when
 * everything is done. */
static struct task *next_work(int *first)
{
	struct task *t = NULL;

	pthread_mutex_lock(&pool.lock);
	for (;;) {
		/* Resume first when many are suspended, so they stay bounded. */
		if (pool.suspended_head && (!pool.free_slots || pool.next_task == pool.tasks ||
					    pool.next_task % 2)) {
			t = pool.suspended_head;
			pool.suspended_head = t->next;
			if (!pool.suspended_head)
				pool.suspended_tail = NULL;
			*first = 0;
			break;
		}
		if (pool.free_slots && pool.next_task < pool.tasks) {
			t = pool.free_slots;
			pool.free_slots = t->next;
			t->index = (int32_t)pool.next_task++;
			t->resumes_left = suspensions_of((uint64_t)t->index);
			*first = 1;
			break;
		}
		if (pool.next_task == pool.tasks && !pool.suspended_head && pool.running == 1)
			break;          /* all done: no other thread can suspend one */
		pool.running--;         /* waits: suspends nothing meanwhile */
		pthread_cond_wait(&pool.ready, &pool.lock);
		pool.running++;
	}
	pthread_mutex_unlock(&pool.lock);
	return t;
}

static void finish_segment(struct task *t, int suspended)
{
	pthread_mutex_lock(&pool.lock);
	t->next = NULL;
	if (suspended) {
		if (pool.suspended_tail)
			pool.suspended_tail->next = t;
		else
			pool.suspended_head = t;
		pool.suspended_tail = t;
	} else {
		t->next = pool.free_slots;
		pool.free_slots = t;
	}
	pthread_cond_broadcast(&pool.ready);
	pthread_mutex_unlock(&pool.lock);
}

static void *worker(void *arg)
{
	struct task *t;
	int first;

	(void)arg;
	while ((t = next_work(&first)) != NULL)
		finish_segment(t, run_segment(t, first));
	pthread_mutex_lock(&pool.lock);
	pool.running--;
	pthread_cond_broadcast(&pool.ready);
	pthread_mutex_unlock(&pool.lock);
	return NULL;
}

/* --- reading the logs back ------------------------------------------------- */

/* Per invocation of the logs: which of its callbacks were seen, bit 2k for
 * segment k's Enter and 2k+1 for its Leave. */
struct seen {
	uint64_t invocation;    /* 0: free entry */
	uint64_t parent;
	int64_t task;           /* Work: its argument; Leaf: -1 */
	uint32_t enters, leaves;        /* bit k: segment k */
	uint32_t resumes_as_call, calls_as_resume;  /* kind contradicting the segment */
	uint32_t returns;       /* bit k: the Leave of segment k was a return */
	bool work;
};

struct table {
	struct seen *entries;
	size_t mask;
};

static struct seen *lookup(struct table *tb, uint64_t invocation)
{
	size_t i = (size_t)(invocation * 0x9e3779b97f4a7c15ull) & tb->mask;

	while (tb->entries[i].invocation && tb->entries[i].invocation != invocation)
		i = (i + 1) & tb->mask;
	tb->entries[i].invocation = invocation;
	return &tb->entries[i];
}

/* The value of field `name` on a line of either format, or NULL. */
static const char *field(const char *line, bool json, const char *name)
{
	char key[32];
	const char *p;

	snprintf(key, sizeof(key), json ? ",\"%s\":" : " %s=", name);
	p = strstr(line, key);
	if (!p)
		return NULL;
	p += strlen(key);
	if (*p == '"' || *p == '(' || *p == '[')
		p++;
	return p;
}

static int problems;

/* Tells the first problems, counts them all; line 0: about the whole log. */
__attribute__((format(printf, 3, 4)))
static void problem(const char *path, unsigned long line, const char *fmt, ...)
{
	va_list ap;

	if (problems++ >= 20)
		return;
	if (line)
		fprintf(stderr, "%s:%lu: ", path, line);
	else
		fprintf(stderr, "%s: ", path);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

/* The table for a log of `tasks` tasks' invocations: a Work, and a Leaf
 * per Work segment. */
static uint64_t table_init(struct table *tb, uint64_t tasks, const char *path)
{
	uint64_t expected_invocations = 0, t;

	for (t = 0; t < tasks; t++)
		expected_invocations += 1 + suspensions_of(t) + 1;
	for (tb->mask = 1; tb->mask < 2 * expected_invocations; tb->mask <<= 1)
		;
	tb->entries = calloc(tb->mask, sizeof(*tb->entries));
	tb->mask--;
	if (!tb->entries) {
		fprintf(stderr, "%s: out of memory\n", path);
		exit(1);
	}
	return expected_invocations;
}

/* One segment callback of a log (its n-th line or record). */
struct observation {
	const char *kind;               /* "call", "resume", "suspend", "return" */
	uint64_t invocation, parent;
	unsigned long segment;
	bool work;
	int64_t task;                   /* a Work call's argument, else -1 */
};

static void observe(struct table *tb, const char *path, unsigned long n,
		    const struct observation *o, const char *line)
{
	struct seen *s;
	bool enter;

	if (o->segment > MAX_SUSPENSIONS) {
		problem(path, n, "segment number out of the workload: %s", line);
		return;
	}
	s = lookup(tb, o->invocation);
	s->work = o->work;
	s->parent = o->parent;
	enter = !strncmp(o->kind, "call", 4) || !strncmp(o->kind, "resume", 6);
	if ((enter ? s->enters : s->leaves) & (1u << o->segment))
		problem(path, n, "a line seen twice: %s", line);
	if (enter)
		s->enters |= 1u << o->segment;
	else
		s->leaves |= 1u << o->segment;
	if (!strncmp(o->kind, "return", 6))
		s->returns |= 1u << o->segment;
	if (enter && (!strncmp(o->kind, "call", 4)) != (o->segment == 0))
		problem(path, n, "a call that is not segment 0, or the reverse: %s", line);
	if (!strncmp(o->kind, "call", 4) && s->work)
		s->task = o->task;
	else if (!s->work)
		s->task = -1;
}

/* After the whole log: every invocation exactly what the workload made. */
static void verify(struct table *tb, const char *path, uint64_t tasks,
		   uint64_t expected_invocations, unsigned long n, const char *unit)
{
	unsigned char *task_seen = calloc(tasks ? tasks : 1, 1);
	uint64_t works = 0, leaves = 0;
	size_t i;

	if (!task_seen) {
		fprintf(stderr, "%s: out of memory\n", path);
		exit(1);
	}
	for (i = 0; i <= tb->mask; i++) {
		struct seen *s = &tb->entries[i];
		uint32_t all;
		unsigned k;

		if (!s->invocation)
			continue;
		if (!s->work) {
			leaves++;
			if (s->enters != 1 || s->leaves != 1 || s->returns != 1)
				problem(path, 0, "a Leaf invocation without exactly its call and "
					"its return");
			if (!s->parent)
				problem(path, 0, "a Leaf invocation with no parent");
			else if (!lookup(tb, s->parent)->work)
				problem(path, 0, "a Leaf invocation whose parent is not a Work");
			continue;
		}
		works++;
		if (s->task < 0 || (uint64_t)s->task >= tasks || task_seen[s->task]++) {
			problem(path, 0, "a Work invocation with no call, an unknown task, or a "
				"task called twice");
			continue;
		}
		k = suspensions_of((uint64_t)s->task);
		all = (1u << (k + 1)) - 1;
		if (s->enters != all || s->leaves != all || s->returns != 1u << k)
			problem(path, 0, "a Work invocation whose segments are not call, "
				"(suspend, resume) x n, return");
	}
	if (works != tasks || leaves != expected_invocations - tasks)
		problem(path, 0, "not one Work invocation per task and one Leaf per Work "
			"segment");
	free(tb->entries);
	free(task_seen);
	printf("%s: %lu %s, %llu Work and %llu Leaf invocations\n", path, n, unit,
	       (unsigned long long)works, (unsigned long long)leaves);
}

/* Reads one text or JSON log; returns how many lines it holds, after
 * checking each invocation's lines against the workload. */
static uint64_t check_log(const char *path, bool json, uint64_t tasks)
{
	FILE *f = fopen(path, "r");
	char *line = NULL;
	size_t cap = 0;
	unsigned long n = 0;
	struct table tb;
	uint64_t expected_invocations;

	if (!f) {
		fprintf(stderr, "%s: %s\n", path, strerror(errno));
		exit(1);
	}
	expected_invocations = table_init(&tb, tasks, path);
	while (getline(&line, &cap, f) > 0) {
		const char *kind = field(line, json, "kind");
		const char *inv = field(line, json, "invocation");
		const char *seg = field(line, json, "segment");
		const char *fn = field(line, json, "function");
		const char *parent = field(line, json, "parent");
		struct observation o;

		n++;
		line[strcspn(line, "\n")] = 0;
		if (!kind || !inv || !seg || !fn || !parent || !strncmp(inv, "null", 4) ||
		    !strncmp(inv, "?", 1)) {
			problem(path, n, "not a line of a stitched segment: %s", line);
			continue;
		}
		o.kind = kind;
		o.invocation = strtoull(inv, NULL, 10);
		o.parent = strtoull(parent, NULL, 10);
		o.segment = strtoul(seg, NULL, 10);
		o.work = !strncmp(fn, "Work", 4);
		o.task = -1;
		if (o.work && !strncmp(kind, "call", 4)) {
			const char *arg = field(line, json, "args");

			o.task = arg ? strtoll(arg, NULL, 10) : -1;
		}
		observe(&tb, path, n, &o, line);
	}
	free(line);
	fclose(f);
	verify(&tb, path, tasks, expected_invocations, n, "lines");
	return n;
}

/* The binary recording, read with asyncelt-dump's own parser: the same
 * checks.  Records carry no segment number on a Leave; each thread's open
 * segments (a Work's, and the Leaf call inside it) give it, and must nest. */
#define MAX_THREADS_READ 256
#define MAX_NESTING 4

static uint64_t check_recording(const char *path, uint64_t tasks)
{
	struct open_segment { uint64_t invocation; unsigned long segment; } (*open)[MAX_NESTING];
	unsigned *depth = calloc(MAX_THREADS_READ, sizeof(*depth));
	FILE *file = fopen(path, "rb");
	struct dump_file f;
	struct table tb;
	uint64_t expected_invocations;
	char error[512], *data;
	long size;
	size_t i;

	open = calloc(MAX_THREADS_READ, sizeof(*open));
	if (!file || fseek(file, 0, SEEK_END) || (size = ftell(file)) < 0 || !open || !depth ||
	    !(data = malloc((size_t)size + 1)) || fseek(file, 0, SEEK_SET) ||
	    fread(data, 1, (size_t)size, file) != (size_t)size) {
		fprintf(stderr, "%s: cannot read it: %s\n", path, strerror(errno));
		exit(1);
	}
	fclose(file);
	if (dump_parse(data, (size_t)size, path, &f, error, sizeof(error)) != ELT_OK) {
		problem(path, 0, "%s", error);
		free(data);
		return 0;
	}
	if (f.truncated)
		problem(path, 0, "cut short: its last record is incomplete");
	expected_invocations = table_init(&tb, tasks, path);
	for (i = 0; i < f.nevents; i++) {
		const struct dump_event *e = &f.events[i];
		const char *name = e->function < f.nfunctions && f.functions[e->function].defined
				   ? f.functions[e->function].name : "?";
		struct open_segment *top;
		struct observation o;
		char what[64];
		int32_t arg;

		snprintf(what, sizeof(what), "a %s record at offset %zu",
			 elt_segment_kind_name((elt_segment_kind)e->kind), e->offset);
		if ((e->flags & (REC_NO_INVOCATION | REC_ORPHAN)) || e->thread >= MAX_THREADS_READ ||
		    e->kind > REC_RETURN) {
			problem(path, i + 1, "not a stitched segment: %s", what);
			continue;
		}
		o.kind = elt_segment_kind_name((elt_segment_kind)e->kind);
		o.invocation = e->invocation;
		o.work = !strcmp(name, "Work");
		o.task = -1;
		o.parent = 0;
		if (e->kind == REC_CALL || e->kind == REC_RESUME) {
			o.segment = e->kind == REC_CALL ? 0 : e->segment;
			if (e->kind == REC_CALL)
				o.parent = e->parent_or_continuation;
			if (o.work && e->kind == REC_CALL && (e->flags & REC_VALUE) &&
			    e->value_len == sizeof(arg)) {
				memcpy(&arg, e->value, sizeof(arg));
				o.task = arg;
			}
			if (depth[e->thread] == MAX_NESTING) {
				problem(path, i + 1, "segments nested deeper than the workload: %s",
					what);
				continue;
			}
			top = &open[e->thread][depth[e->thread]++];
			top->invocation = e->invocation;
			top->segment = o.segment;
		} else {
			top = depth[e->thread] ? &open[e->thread][depth[e->thread] - 1] : NULL;
			if (!top || top->invocation != e->invocation) {
				problem(path, i + 1, "a Leave of no segment open on its thread: %s",
					what);
				continue;
			}
			depth[e->thread]--;
			o.segment = top->segment;
		}
		/* the parent of a Leaf's only line; a Work's never looked at */
		if (!o.work && e->kind != REC_CALL)
			o.parent = lookup(&tb, e->invocation)->parent;
		observe(&tb, path, i + 1, &o, what);
	}
	verify(&tb, path, tasks, expected_invocations, (unsigned long)f.nevents, "records");
	i = f.nevents;
	dump_file_free(&f);
	free(data);
	free(open);
	free(depth);
	return i;
}

/* --- main ------------------------------------------------------------------ */

static uint64_t env_number(const char *name, uint64_t fallback)
{
	const char *v = getenv(name);
	char *end;
	unsigned long long n;

	if (!v || !*v)
		return fallback;
	errno = 0;
	n = strtoull(v, &end, 10);
	if (errno || *end || n == 0) {
		fprintf(stderr, "stress: %s=\"%s\" is not a positive whole number\n", name, v);
		exit(2);
	}
	return n;
}

static double seconds_since(const struct timespec *start)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return (double)(now.tv_sec - start->tv_sec) + (double)(now.tv_nsec - start->tv_nsec) / 1e9;
}

int main(int argc, char **argv)
{
	uint64_t want = env_number("STRESS_SEGMENTS", 10000000);
	unsigned threads = (unsigned)env_number("STRESS_THREADS", 8), i;
	uint64_t tasks = 0, segments = 0, work_pairs = 0, text_lines, json_lines, records;
	char spec[4096], text_log[1024], json_log[1024], recording[1024];
	const char *dir;
	pthread_t *tids;
	struct timespec start;
	double run_time, total_time;
	elt_invocation_stats stats;
	elt_status st;
	bool check_only = false;
	int failed = 0;

	if (argc == 3 && strcmp(argv[1], "--check") == 0) {
		check_only = true;
		dir = argv[2];
	} else if (argc == 2 && argv[1][0] != '-') {
		dir = argv[1];
	} else {
		fprintf(stderr, "usage: stress [--check] DIR (STRESS_SEGMENTS, STRESS_THREADS)\n");
		return 2;
	}
	/* Whole tasks, at least the segments asked for. */
	while (segments < want) {
		segments += segments_of(tasks);
		work_pairs += suspensions_of(tasks) + 1;
		tasks++;
	}
	if (tasks > INT32_MAX) {
		fprintf(stderr, "stress: STRESS_SEGMENTS too large\n");
		return 2;
	}
	snprintf(text_log, sizeof(text_log), "%s/log.txt", dir);
	snprintf(json_log, sizeof(json_log), "%s/log.jsonl", dir);
	snprintf(recording, sizeof(recording), "%s/log.bin", dir);
	snprintf(spec, sizeof(spec),
		 "counting:output=%s/counts.txt;"
		 "check:expect=Work:%llu,Leaf:%llu,output=%s/check.txt;"
		 "logging:format=text,output=%s;"
		 "logging:format=json,output=%s;"
		 "logging:format=binary,output=%s;"
		 "timing:output=%s/timing.txt,trace=%s/trace.json",
		 dir, (unsigned long long)work_pairs, (unsigned long long)work_pairs, dir,
		 text_log, json_log, recording, dir, dir);
	if (check_only)
		goto check_logs;
	if (elt_register_function(WORK_ID, "Work", "l(K i)", ELT_FUNCTION_ASYNC) != ELT_OK ||
	    elt_register_function(LEAF_ID, "Leaf", "i(i)", 0) != ELT_OK ||
	    elt_plugin_load(spec) != ELT_OK) {
		fprintf(stderr, "stress: setup: %s\n", elt_last_error());
		return 1;
	}
	printf("stress: %u threads, %llu tasks, %llu segments; plugins: %s\n", threads,
	       (unsigned long long)tasks, (unsigned long long)segments, spec);
	fflush(stdout);

	for (i = 0; i < MAX_IN_FLIGHT; i++) {
		slots[i].next = pool.free_slots;
		pool.free_slots = &slots[i];
	}
	pool.tasks = tasks;
	pool.running = threads;
	tids = calloc(threads, sizeof(*tids));
	clock_gettime(CLOCK_MONOTONIC, &start);
	for (i = 0; i < threads; i++)
		if (!tids || pthread_create(&tids[i], NULL, worker, NULL)) {
			fprintf(stderr, "stress: cannot start thread %u\n", i);
			return 1;
		}
	for (i = 0; i < threads; i++)
		pthread_join(tids[i], NULL);
	run_time = seconds_since(&start);
	elt_get_invocation_stats(&stats);
	st = elt_shutdown();
	total_time = seconds_since(&start);
	free(tids);

	printf("stress: %llu segments in %.2f s: %.0f segments/s (%.0f/s with the logs "
	       "written out at shutdown, %.2f s)\n", (unsigned long long)segments, run_time,
	       (double)segments / run_time, (double)segments / total_time, total_time);

	if (st != ELT_OK) {
		fprintf(stderr, "FAIL: elt_shutdown: %s: %s\n", elt_strerror(st), elt_last_error());
		failed = 1;
	}
	if (emit_failures) {
		fprintf(stderr, "FAIL: %llu elt_emit_* calls failed\n",
			(unsigned long long)emit_failures);
		failed = 1;
	}
	if (stats.started != tasks + work_pairs || stats.completed != stats.started ||
	    stats.live || stats.orphan_resumes || stats.early_resumes > stats.started ||
	    stats.unbalanced_leaves || stats.abandoned || stats.unpublished) {
		fprintf(stderr, "FAIL: invocations: %llu started (want %llu), %llu completed, "
			"%llu live, %llu orphan resumes, %llu unbalanced leaves, %llu abandoned, "
			"%llu unpublished\n", (unsigned long long)stats.started,
			(unsigned long long)(tasks + work_pairs),
			(unsigned long long)stats.completed, (unsigned long long)stats.live,
			(unsigned long long)stats.orphan_resumes,
			(unsigned long long)stats.unbalanced_leaves,
			(unsigned long long)stats.abandoned, (unsigned long long)stats.unpublished);
		failed = 1;
	}
check_logs:
	text_lines = check_log(text_log, false, tasks);
	json_lines = check_log(json_log, true, tasks);
	records = check_recording(recording, tasks);
	if (text_lines != segments || json_lines != segments || records != segments) {
		fprintf(stderr, "FAIL: a log does not hold one line or record per segment (%llu)\n",
			(unsigned long long)segments);
		failed = 1;
	}
	if (problems) {
		fprintf(stderr, "FAIL: %d problems in the logs (the first 20 above)\n", problems);
		failed = 1;
	}
	printf("stress: %s\n", failed ? "FAIL" : "PASS: exact counts, every line once");
	return failed;
}
