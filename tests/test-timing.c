/*
 * The timing plugin, loaded as a module: a scripted invocation that hops
 * between two threads (A -> B -> B -> A: 4 segments, 2 hops), many
 * invocations on several threads (3 segments each, no hop), one that
 * never resumes, one abandoned by an unwind and one by a continuation
 * suspended again before its resume, one still running at exit;
 * then the invariants in its JSON report (active <= wall,
 * suspended = wall - active, segments = resumes + 1, the hop counts), the
 * CSV and table forms, and the Chrome trace (tests/check-trace.py: async
 * pairs, flows with both ends, slices nested per thread, and per
 * invocation its slices within its wall time).  Segments come from the
 * producer API (portable).
 */
#define ELT_PLUGIN_STATIC 1       /* the holder below: no module entry */
#include "tap.h"
#include "plugin-output.h"

#include <asyncelt.h>
#include <asyncelt/plugin.h>

#include <pthread.h>
#include <stdbool.h>
#include <unistd.h>
#if !defined(_WIN32)
# include <sys/wait.h>
#endif

#define THREADS 4
#define INVOCATIONS 50          /* per thread */
#define ALL (THREADS * INVOCATIONS)

static const elt_function_id HOP = 0x100, WORK = 0x200, NEVER = 0x300, OUTER = 0x400,
	INNER = 0x500, RUNNING = 0x600, ORPHANED = 0x700, REUSED = 0x800, KEPT = 0x900;

/* Holds its slot for Kept's invocations, without an invocation_abandoned:
 * the library keeps such an abandoned invocation live, and lists it to
 * timing's fini, which counted it when it was abandoned. */
static int held;
static void hold(const elt_info *info, void *state)
{
	void **slot;

	(void)state;
	if (elt_get_function_id(info) == KEPT && (slot = elt_get_invocation_slot(info)))
		*slot = &held;
}
ELT_PLUGIN_DEFINE(holder, .enter = hold);

/* --- a thread that runs the steps it is given, one at a time ------------ */

struct worker {
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	void (*step)(void);
	bool quit;
};

static void *worker_loop(void *arg)
{
	struct worker *w = arg;

	pthread_mutex_lock(&w->lock);
	while (!w->quit) {
		if (!w->step) {
			pthread_cond_wait(&w->cond, &w->lock);
			continue;
		}
		pthread_mutex_unlock(&w->lock);
		w->step();
		pthread_mutex_lock(&w->lock);
		w->step = NULL;
		pthread_cond_broadcast(&w->cond);
	}
	pthread_mutex_unlock(&w->lock);
	return NULL;
}

/* Runs step on the worker's thread and waits for it. */
static void run_on(struct worker *w, void (*step)(void))
{
	pthread_mutex_lock(&w->lock);
	w->step = step;
	pthread_cond_broadcast(&w->cond);
	while (w->step)
		pthread_cond_wait(&w->cond, &w->lock);
	pthread_mutex_unlock(&w->lock);
}

static void worker_start(struct worker *w)
{
	pthread_mutex_init(&w->lock, NULL);
	pthread_cond_init(&w->cond, NULL);
	w->step = NULL;
	w->quit = false;
	if (pthread_create(&w->thread, NULL, worker_loop, w))
		tap_bail("pthread_create failed");
}

static void worker_stop(struct worker *w)
{
	pthread_mutex_lock(&w->lock);
	w->quit = true;
	pthread_cond_broadcast(&w->cond);
	pthread_mutex_unlock(&w->lock);
	pthread_join(w->thread, NULL);
}

/* --- the scenario -------------------------------------------------------- */

/* Two threads each start Outer and Inner, then each Outer's Leave skips
 * its Inner, one after the other: their segments overlap in time, so in
 * the trace each must end inside its own caller, on its own thread. */
static void unwind_begin(void)
{
	elt_emit_enter(OUTER, NULL, NULL);
	elt_emit_enter(INNER, NULL, NULL);
}

static void unwind_end(void)
{
	elt_emit_leave(OUTER, NULL, NULL);
}

#define K1 ((void *)(uintptr_t)0x1000)
#define K2 ((void *)(uintptr_t)0x1010)
#define K3 ((void *)(uintptr_t)0x1020)

static void hop_call(void)              /* on A */
{
	elt_emit_enter(HOP, NULL, NULL);
	elt_emit_leave(HOP, NULL, K1);
}

static void hop_to_b(void)              /* on B: a hop */
{
	elt_emit_enter(HOP, NULL, K1);
	elt_emit_leave(HOP, NULL, K2);
}

static void hop_stay_b(void)            /* on B again: no hop */
{
	elt_emit_enter(HOP, NULL, K2);
	elt_emit_leave(HOP, NULL, K3);
}

static void hop_back_to_a(void)         /* on A: a hop, the final return */
{
	int64_t result = 7;

	elt_emit_enter(HOP, NULL, K3);
	elt_emit_leave(HOP, &result, NULL);
}

/* Each invocation suspends twice and resumes on its own thread. */
static void *work(void *arg)
{
	uintptr_t base = ((uintptr_t)arg + 1) << 20;
	int32_t n = 3;
	void *args[] = { &n };
	int64_t result = 1;
	int i;

	for (i = 0; i < INVOCATIONS; i++) {
		void *k1 = (void *)(base + (uintptr_t)i * 32), *k2 = (void *)((uintptr_t)k1 + 16);

		elt_emit_enter(WORK, args, NULL);
		elt_emit_leave(WORK, NULL, k1);
		elt_emit_enter(WORK, NULL, k1);
		elt_emit_leave(WORK, NULL, k2);
		elt_emit_enter(WORK, NULL, k2);
		elt_emit_leave(WORK, &result, NULL);
	}
	return NULL;
}

/* An unwind: Outer's Leave comes while Inner (called by it) never left;
 * then another call on the same thread.  Inner stays open. */
static void *unwind(void *arg)
{
	(void)arg;
	elt_emit_enter(OUTER, NULL, NULL);
	elt_emit_enter(INNER, NULL, NULL);
	elt_emit_leave(OUTER, NULL, NULL);
	elt_emit_enter(OUTER, NULL, NULL);
	elt_emit_leave(OUTER, NULL, NULL);
	return NULL;
}

static void scenario(bool everything)
{
	struct worker a, b;
	pthread_t threads[THREADS];
	int t;

	worker_start(&a);
	worker_start(&b);
	run_on(&a, hop_call);
	run_on(&b, hop_to_b);
	run_on(&b, hop_stay_b);
	run_on(&a, hop_back_to_a);
	worker_stop(&a);
	worker_stop(&b);
	if (!everything)
		return;
	for (t = 0; t < THREADS; t++)
		if (pthread_create(&threads[t], NULL, work, (void *)(uintptr_t)t))
			tap_bail("pthread_create failed");
	for (t = 0; t < THREADS; t++)
		pthread_join(threads[t], NULL);
	elt_emit_enter(NEVER, NULL, NULL);
	elt_emit_leave(NEVER, NULL, (void *)(uintptr_t)0x9990);        /* never resumed */
	if (pthread_create(&threads[0], NULL, unwind, NULL))
		tap_bail("pthread_create failed");
	pthread_join(threads[0], NULL);
	elt_emit_enter(RUNNING, NULL, NULL);    /* still running at shutdown */
}

static void setup(void)
{
	if (elt_register_function(HOP, "Hop", "l(K)", ELT_FUNCTION_ASYNC) ||
	    elt_register_function(WORK, "Work", "l(K i)", ELT_FUNCTION_ASYNC) ||
	    elt_register_function(NEVER, "Never", "v(K)", ELT_FUNCTION_ASYNC) ||
	    elt_register_function(OUTER, "Outer", "v()", 0) ||
	    elt_register_function(INNER, "Inner", "v()", 0) ||
	    elt_register_function(RUNNING, "Running", "v()", 0) ||
	    elt_register_function(ORPHANED, "Orphaned", "v(K)", ELT_FUNCTION_ASYNC) ||
	    elt_register_function(REUSED, "Reused", "v(K)", ELT_FUNCTION_ASYNC) ||
	    elt_register_function(KEPT, "Kept", "v()", 0))
		tap_bail("register: %s", elt_last_error());
}

/* --- reading the JSON report --------------------------------------------- */

struct measure {
	unsigned long long count;
	double mean, p50, p90, p99, max;
};

/* One measure of one function, from the report timing's format=json writes. */
static bool measure_of(const char *report, const char *function, const char *name,
		       struct measure *m)
{
	char needle[128];
	const char *at;

	snprintf(needle, sizeof(needle), "{\"function\": \"%s\",", function);
	at = strstr(report, needle);
	snprintf(needle, sizeof(needle), "\"%s\": {\"count\": ", name);
	at = at ? strstr(at, needle) : NULL;
	return at && sscanf(at + strlen(needle),
			    "%llu, \"mean\": %lf, \"p50\": %lf, \"p90\": %lf, \"p99\": %lf, "
			    "\"max\": %lf", &m->count, &m->mean, &m->p50, &m->p90, &m->p99,
			    &m->max) == 6;
}

/* The invariants every function's numbers keep. */
static void check_invariants(const char *report, const char *function)
{
	struct measure wall, active, suspended;
	bool found = measure_of(report, function, "wall_us", &wall) &&
		     measure_of(report, function, "active_us", &active) &&
		     measure_of(report, function, "suspended_us", &suspended);

	ok(found && active.mean <= wall.mean && active.max <= wall.max,
	   "%s: active <= wall (means %.3f <= %.3f us)", function, active.mean, wall.mean);
	/* each mean is rounded to the nanosecond: three roundings */
	ok(found && suspended.mean - (wall.mean - active.mean) < 0.0016 &&
	   (wall.mean - active.mean) - suspended.mean < 0.0016,
	   "%s: suspended = wall - active (%.3f = %.3f - %.3f)", function, suspended.mean,
	   wall.mean, active.mean);
}

/* A measure whose every value is `want` (mean and max equal it). */
static void is_all(const char *report, const char *function, const char *name,
		   unsigned long long count, double want)
{
	struct measure m = { 0, 0, 0, 0, 0, 0 };

	measure_of(report, function, name, &m);
	ok(m.count == count && m.mean == want && m.max == want && m.p50 == want,
	   "%s: %s is %g in all %llu (got %llu, mean %g, max %g)", function, name, want,
	   count, m.count, m.mean, m.max);
}

/* --- the other report forms, each in a fork child of its own ------------- */

#if !defined(_WIN32)
static void run_child_form(const char *prefix, const char *form, char *path, size_t size)
{
	char spec[512];
	pid_t pid;
	int status = -1;

	snprintf(path, size, "%s.%s", prefix, form);
	snprintf(spec, sizeof(spec), "timing:format=%s,output=%s", form, path);
	pid = fork();
	if (pid == 0) {
		setup();
		if (elt_plugin_load(spec) != ELT_OK)
			_exit(2);
		scenario(false);
		_exit(elt_shutdown() == ELT_OK ? 0 : 1);
	}
	if (pid > 0)
		waitpid(pid, &status, 0);
	ok(pid > 0 && WIFEXITED(status) && WEXITSTATUS(status) == 0,
	   "format=%s: a run exits cleanly", form);
}
#endif

/* CSV and the table, each from a run in a fork child of its own. */
static void check_other_forms(const char *prefix)
{
#if !defined(_WIN32)
	char path[300];
	char *report;

	run_child_form(prefix, "csv", path, sizeof(path));
	report = slurp(path);
	ok(strstr(report, "function,calls,segments,measure,count,mean,p50,p90,p99,max\n") &&
	   strstr(report, "\"Hop\",1,4,hops,1,2.000,2.000,2.000,2.000,2.000\n"),
	   "CSV: a header, and Hop's 2 hops");
	free(report);
	check_with_python("--csv", path, "the CSV parses, every row as wide as the header");
	unlink(path);
	run_child_form(prefix, "table", path, sizeof(path));
	report = slurp(path);
	ok(strstr(report, "asyncelt timing report") && strstr(report, "\nHop ") &&
	   strstr(report, "  total: 0\n"), "table: a title, Hop's row, no incomplete invocation");
	free(report);
	unlink(path);
#else
	(void)prefix;
	tap_skip(5, "no fork on Windows: one form per process");
#endif
}

/*
 * trace= and a fork: the child's trace is a file of its own, the name's
 * %p its pid, or without %p the name and ".PID" (two processes appending
 * to one JSON array would spoil it); it names the forking thread again (it
 * named it only in the parent's: the name was remembered in the buffer
 * the child inherits), and the parent's stays one whole document.
 */
static void check_fork_trace(const char *prefix, bool pid_in_name)
{
#if !defined(_WIN32)
	const char *how = pid_in_name ? "trace=%p" : "trace= without %p";
	char spec[600], path[330], parent_path[330], name[300];
	int fds[2], status = -1;
	pid_t pid, grandchild = -1;
	char *trace;

	snprintf(name, sizeof(name), "%s-fork%s.json", prefix, pid_in_name ? "-%p" : "");
	snprintf(spec, sizeof(spec), "timing:output=%s.fork.txt,trace=%s", prefix, name);
	if (pipe(fds) != 0)
		tap_bail("pipe");
	pid = fork();
	if (pid == 0) {
		pid_t child;

		setup();
		if (elt_plugin_load(spec) != ELT_OK)
			_exit(2);
		elt_emit_enter(OUTER, NULL, NULL);
		elt_emit_leave(OUTER, NULL, NULL);
		child = fork();
		elt_emit_enter(OUTER, NULL, NULL);      /* in both */
		elt_emit_leave(OUTER, NULL, NULL);
		if (child == 0)
			_exit(elt_shutdown() == ELT_OK ? 0 : 1);
		if (child < 0 || write(fds[1], &child, sizeof(child)) != sizeof(child) ||
		    waitpid(child, &status, 0) != child || status != 0)
			_exit(3);
		_exit(elt_shutdown() == ELT_OK ? 0 : 1);
	}
	close(fds[1]);
	if (read(fds[0], &grandchild, sizeof(grandchild)) != sizeof(grandchild))
		grandchild = -1;
	close(fds[0]);
	if (pid > 0)
		waitpid(pid, &status, 0);
	ok(pid > 0 && WIFEXITED(status) && WEXITSTATUS(status) == 0 && grandchild > 0,
	   "%s: a run that forks exits cleanly, in both processes", how);
	if (pid_in_name) {
		snprintf(path, sizeof(path), "%s-fork-%ld.json", prefix, (long)grandchild);
		snprintf(parent_path, sizeof(parent_path), "%s-fork-%ld.json", prefix, (long)pid);
	} else {
		snprintf(path, sizeof(path), "%s.%ld", name, (long)grandchild);
		snprintf(parent_path, sizeof(parent_path), "%s", name);
	}
	trace = slurp(path);
	snprintf(spec, sizeof(spec), "\"name\":\"thread_name\",\"pid\":%ld,\"tid\":1,",
		 (long)grandchild);
	is_int(count_of(trace, spec), 1, "%s: the child's own trace names its thread", how);
	free(trace);
	check_with_python("--trace", path, "the child's trace: every thread with slices named");
	check_with_python("--trace", parent_path, "the parent's trace: one whole document too");
	unlink(path);
	unlink(parent_path);
	snprintf(path, sizeof(path), "%s.fork.txt", prefix);
	unlink(path);
#else
	(void)prefix;
	(void)pid_in_name;
	tap_skip(4, "no fork on Windows");
#endif
}

/* output=/dev/null, as a profiler silences the report: not a file to
 * empty, and no complaint that it cannot be (ftruncate there fails). */
static void check_device_output(const char *prefix)
{
#if !defined(_WIN32)
	char path[300], *said;
	int status = -1;
	pid_t pid;

	snprintf(path, sizeof(path), "%s.stderr.txt", prefix);
	pid = fork();
	if (pid == 0) {
		/* unbuffered, as stderr was: _exit() flushes nothing */
		if (!freopen(path, "w", stderr) || setvbuf(stderr, NULL, _IONBF, 0) != 0)
			_exit(2);
		setup();
		if (elt_plugin_load("timing:output=/dev/null") != ELT_OK)
			_exit(3);
		elt_emit_enter(OUTER, NULL, NULL);
		elt_emit_leave(OUTER, NULL, NULL);
		_exit(elt_shutdown() == ELT_OK ? 0 : 4);
	}
	if (pid > 0)
		waitpid(pid, &status, 0);
	said = slurp(path);
	ok(pid > 0 && WIFEXITED(status) && WEXITSTATUS(status) == 0 && !strstr(said, "timing:"),
	   "output=/dev/null: a run exits cleanly, the plugin saying nothing (%s)", said);
	free(said);
	unlink(path);
#else
	(void)prefix;
	tap_skip(1, "no fork on Windows");
#endif
}

int main(void)
{
	static char env[1100];          /* putenv keeps it */
	const char *prefix = test_prefix("timing");
	char spec[1024], report_path[300], trace_path[300], bad[300];
	char *report, *trace;

	tap_plan(52);

	check_other_forms(prefix);
	check_fork_trace(prefix, true);
	check_fork_trace(prefix, false);
	check_device_output(prefix);

	setup();
	snprintf(bad, sizeof(bad), "%s.no-such-dir/trace.json", prefix);
	snprintf(spec, sizeof(spec), "timing:trace=%s", bad);
	snprintf(report_path, sizeof(report_path), "%s.kept.txt", prefix);
	{
		FILE *f = fopen(report_path, "wb");

		if (!f || fputs("keep\n", f) < 0 || fclose(f) != 0)
			tap_bail("cannot write %s", report_path);
	}
	snprintf(spec, sizeof(spec), "timing:output=%s,trace=%s", report_path, bad);
	is_int(elt_plugin_load(spec), ELT_E_IO, "an unwritable trace is refused");
	ok(strstr(elt_last_error(), bad) != NULL, "the error names it: %s", elt_last_error());
	report = slurp(report_path);
	is_str(report, "keep\n", "and the report it named is left as it was");
	free(report);
	unlink(report_path);
	is_int(elt_plugin_load("timing:format=xml"), ELT_E_BAD_OPTION, "format=xml is refused");
	is_int(elt_plugin_load("timing:bins=4"), ELT_E_BAD_OPTION, "an unknown option is refused");
	is_int(elt_plugin_load("timing:trace=/dev/null,output=/dev/null,trace=/dev/null"),
	       ELT_E_BAD_OPTION, "trace given twice is refused: %s", elt_last_error());

	snprintf(report_path, sizeof(report_path), "%s.json", prefix);
	snprintf(trace_path, sizeof(trace_path), "%s-trace.json", prefix);
	/* as a profiler's user would: through $ASYNCELT_PLUGINS and elt_init */
	snprintf(env, sizeof(env), "ASYNCELT_PLUGINS=timing:format=json,output=%s,trace=%s",
		 report_path, trace_path);
	putenv(env);
	is_int(elt_init(), ELT_OK, "timing loads from $ASYNCELT_PLUGINS: %s", elt_last_error());
	is_int(elt_plugin_add(&elt_plugin_holder, NULL), ELT_OK, "and a plugin that holds slots");
	scenario(true);
	{
		/* resumes never seen suspending: invocations whose start is
		 * unknown, which timing leaves out */
		static char continuations[3];
		int i;

		for (i = 0; i < 3; i++) {
			elt_emit_enter(ORPHANED, NULL, &continuations[i]);
			elt_emit_leave(ORPHANED, NULL, NULL);
		}
		/* a continuation suspended again before its resume: the
		 * first invocation is abandoned, the second completes */
		elt_emit_enter(REUSED, NULL, NULL);
		elt_emit_leave(REUSED, NULL, &continuations[0]);
		elt_emit_enter(REUSED, NULL, NULL);
		elt_emit_leave(REUSED, NULL, &continuations[0]);
		elt_emit_enter(REUSED, NULL, &continuations[0]);
		elt_emit_leave(REUSED, NULL, NULL);
		/* abandoned, and kept for the holder */
		elt_emit_enter(OUTER, NULL, NULL);
		elt_emit_enter(KEPT, NULL, NULL);
		elt_emit_leave(OUTER, NULL, NULL);
	}
	{
		struct worker x, y;

		worker_start(&x);
		worker_start(&y);
		run_on(&x, unwind_begin);
		run_on(&y, unwind_begin);
		run_on(&x, unwind_end);
		run_on(&y, unwind_end);
		worker_stop(&x);
		worker_stop(&y);
	}
	is_int(elt_shutdown(), ELT_OK, "shutdown writes the report and the trace");

	report = slurp(report_path);
	check_with_python("--json", report_path, "the JSON report parses");
	ok(strstr(report, "{\"function\": \"Hop\", \"calls\": 1, \"total_segments\": 4,") != NULL,
	   "Hop: 1 call, 4 segments");
	is_all(report, "Hop", "hops", 1, 2);
	is_all(report, "Hop", "segments", 1, 4);
	{
		struct measure latency = { 0, 0, 0, 0, 0, 0 };

		bool found = measure_of(report, "Hop", "latency_us", &latency);

		ok(found && latency.count == 3, "Hop: 3 suspend-to-resume latencies (got %llu)",
		   latency.count);
		measure_of(report, "Work", "latency_us", &latency);
		ok(latency.count == 2 * ALL, "Work: %d latencies, 2 per invocation (got %llu)",
		   2 * ALL, latency.count);
	}
	ok(strstr(report, "{\"function\": \"Work\", \"calls\": 200, \"total_segments\": 600,") != NULL,
	   "Work: %d calls, %d segments", ALL, 3 * ALL);
	is_all(report, "Work", "segments", ALL, 3);      /* = 2 resumes + 1 */
	is_all(report, "Work", "hops", ALL, 0);
	/* Outer's five invocations are of one segment each */
	is_all(report, "Outer", "segments", 5, 1);
	is_all(report, "Outer", "hops", 5, 0);
	is_all(report, "Outer", "suspended_us", 5, 0);
	check_invariants(report, "Hop");
	check_invariants(report, "Work");
	check_invariants(report, "Outer");
	ok(strstr(report, "\"Orphaned\"") == NULL,
	   "3 orphan resumes and their returns: no call, no times (their starts unknown)");
	ok(strstr(report, "\"abandoned\": 5, \"incomplete\": 2}") != NULL,
	   "5 abandoned, Inner thrice and Kept (unwound) and the first Reused; 2 "
	   "incomplete, Never (suspended) and Running: Kept, kept for the holder, "
	   "not twice");
	ok(strstr(report, "{\"function\": \"Kept\", \"calls\": 1, \"total_segments\": 1,") != NULL,
	   "Kept: 1 call, its segment counted once");
	ok(strstr(report, "{\"function\": \"Reused\", \"calls\": 2, \"total_segments\": 3,") != NULL,
	   "Reused: 2 calls, 3 segments (the abandoned one's first counted)");
	is_all(report, "Reused", "segments", 1, 2);
	free(report);

	trace = slurp(trace_path);
	is_int(count_of(trace, "\"ph\":\"b\""), ALL + 14, "the trace: an async begin per invocation");
	is_int(count_lines_with(trace, "\"ph\":\"e\"", "\"incomplete\":true"), 7,
	       "7 of them end marked incomplete, once: 2 at exit, 5 when abandoned");
	is_int(count_of(trace, "\"flow_out\":true"), 3 + 2 * ALL + 1 + 2,
	       "a flow out of every suspension");
	is_int(count_of(trace, "\"flow_in\":true"), 3 + 2 * ALL + 1 + 2,
	       "a flow into every resume, and one for each suspension never resumed");
	ok(count_of(trace, "\"name\":\"thread_name\"") >= 3 + THREADS,
	   "every thread is named");
	free(trace);
	check_with_python("--trace", trace_path, "the trace: pairs, flows, nesting, invocations");
	unlink(report_path);
	unlink(trace_path);
	return tap_done();
}
