/*
 * fork() on another thread while elt_shutdown() runs the plugins' fini,
 * each case in a process of its own (a shutdown is once per process),
 * killed if it stalls:
 *
 *  1. Between the fini of two logging instances, by a thread that wrote
 *     to both: the module's fork handlers walked the thread's buffers,
 *     one of them in the set the first fini had closed and unmapped, and
 *     the process crashed in fork().  Both logs must also hold the
 *     thread's segments.
 *  2. While a fini lists the live invocations, with the function it gave
 *     the walk taking a lock that the plugin's own fork handler takes
 *     too, as the timing plugin's trace does: the walk ran that function
 *     with the library's thread list locked, which the library's fork
 *     handler takes after the plugin's, and both waited forever.
 */
#define ELT_PLUGIN_STATIC 1
#include "tap.h"

#include <asyncelt.h>
#include <asyncelt/plugin.h>

#if !defined(_WIN32)
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "fork-child.h"

#define CASE_SECONDS 20         /* a case still running then has stalled */

static const elt_function_id WORK = 0x10;
static atomic_int fork_now, forker_recorded, forked_status = -1;
static pthread_t forker;

static void pause_ms(int ms)
{
	nanosleep(&(struct timespec){ 0, ms * 1000000L }, NULL);
}

/* Waits (at most 10 s) until *flag is set. */
static int wait_for(atomic_int *flag)
{
	int i;

	for (i = 0; i < 10000 && !atomic_load(flag); i++)
		pause_ms(1);
	return atomic_load(flag);
}

/* The thread that forks once told to; its child ends at once. */
static void *fork_when_told(void *arg)
{
	int status;
	pid_t pid;

	(void)arg;
	elt_emit_enter(WORK, NULL, NULL);       /* a buffer in each log */
	elt_emit_leave(WORK, NULL, NULL);
	atomic_store(&forker_recorded, 1);
	if (!wait_for(&fork_now))
		return NULL;
	pid = fork();
	if (pid == 0)
		_exit(0);
	if (pid > 0 && waitpid(pid, &status, 0) == pid)
		atomic_store(&forked_status, status);
	return NULL;
}

static void start_forker(void)
{
	if (pthread_create(&forker, NULL, fork_when_told, NULL) != 0)
		_exit(20);
}

/* --- 1: between two sets' fini ------------------------------------------ */

static char log_a[64], log_b[64];

static elt_status between_fini(void *state)
{
	(void)state;
	atomic_store(&fork_now, 1);
	pthread_join(forker, NULL);
	return ELT_OK;
}

ELT_PLUGIN_DEFINE(between, .fini = between_fini, .flags = ELT_PLUGIN_NO_INVOCATIONS);

static int between_two_logs(void)
{
	char spec[96];
	int ok;

	snprintf(spec, sizeof(spec), "logging:output=%s", log_a);
	ok = elt_plugin_load(spec) == ELT_OK &&
	     elt_plugin_add(&elt_plugin_between, NULL) == ELT_OK;
	snprintf(spec, sizeof(spec), "logging:output=%s", log_b);
	if (!ok || elt_plugin_load(spec) != ELT_OK)
		return 10;
	start_forker();
	wait_for(&forker_recorded);     /* its segments in both logs */
	if (elt_shutdown() != ELT_OK)
		return 11;
	return atomic_load(&forked_status) == 0 ? 0 : 12;
}

/* Lines of the file that name the function. */
static int lines_naming(const char *path, const char *name)
{
	char line[512];
	FILE *f = fopen(path, "r");
	int n = 0;

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		n += strstr(line, name) != NULL;
	fclose(f);
	return n;
}

/* --- 2: a lock of the plugin's, in the live walk ------------------------ */

static pthread_mutex_t plugin_lock = PTHREAD_MUTEX_INITIALIZER;
static atomic_int prepared;

static void prepare(void)
{
	pthread_mutex_lock(&plugin_lock);
	atomic_store(&prepared, 1);
}

static void after(void)
{
	pthread_mutex_unlock(&plugin_lock);
}

static elt_status walker_init(const char *options, void **state)
{
	(void)options;
	(void)state;
	/* After the library's own: they run before its handler. */
	return pthread_atfork(prepare, after, after) == 0 ? ELT_OK : ELT_E_NO_MEMORY;
}

static atomic_int listed;

static void list_one(const elt_invocation *inv, const elt_function_desc *function,
		     void *slot, void *arg)
{
	(void)inv;
	(void)function;
	(void)slot;
	(void)arg;
	atomic_store(&fork_now, 1);
	wait_for(&prepared);    /* the fork holds the plugin's lock */
	pthread_mutex_lock(&plugin_lock);
	atomic_fetch_add(&listed, 1);
	pthread_mutex_unlock(&plugin_lock);
}

static elt_status walker_fini(void *state);
ELT_PLUGIN_DEFINE(walker, .init = walker_init, .fini = walker_fini);

static elt_status walker_fini(void *state)
{
	(void)state;
	elt_foreach_live_invocation(&elt_plugin_walker, list_one, NULL);
	pthread_join(forker, NULL);
	return ELT_OK;
}

static int fork_during_walk(void)
{
	if (elt_plugin_add(&elt_plugin_walker, NULL) != ELT_OK)
		return 10;
	start_forker();
	/* its own invocation ended, or the walk could list it too (seen
	 * under qemu: listed 2) */
	wait_for(&forker_recorded);
	elt_emit_enter(WORK, NULL, NULL);       /* live at the shutdown */
	if (elt_shutdown() != ELT_OK)
		return 11;
	if (atomic_load(&listed) != 1)
		return 12;
	return atomic_load(&forked_status) == 0 ? 0 : 13;
}

/* --- the cases ---------------------------------------------------------- */

/* Runs work() in a child; "" when it returned 0.  Killed when still
 * running after CASE_SECONDS: not by an alarm, which no thread would
 * take, both having blocked signals (the walk, the fork's handlers). */
static const char *run_case(int (*work)(void))
{
	static char verdict[96];
	int status, ended;
	pid_t pid = fork();

	if (pid == 0) {
		if (elt_register_function(WORK, "Work", "v()", 0) != ELT_OK)
			_exit(9);
		_exit(work());
	}
	if (pid < 0)
		return "fork failed";
	ended = wait_child_or_kill(pid, CASE_SECONDS, &status);
	if (ended < 0)
		return "waitpid failed";
	if (!ended) {
		snprintf(verdict, sizeof(verdict), "stalled: killed after %d s", CASE_SECONDS);
		return verdict;
	}
	if (WIFSIGNALED(status))
		snprintf(verdict, sizeof(verdict), "killed by signal %d", WTERMSIG(status));
	else if (WEXITSTATUS(status))
		snprintf(verdict, sizeof(verdict), "ended with %d", WEXITSTATUS(status));
	else
		verdict[0] = 0;
	return verdict;
}

int main(void)
{
	const char *verdict;

	tap_plan(4);
	snprintf(log_a, sizeof(log_a), "test-fork-in-fini-%ld-a.log", (long)getpid());
	snprintf(log_b, sizeof(log_b), "test-fork-in-fini-%ld-b.log", (long)getpid());

	verdict = run_case(between_two_logs);
	ok(!*verdict, "a fork between two logs' fini: shutdown and fork finish (%s)",
	   *verdict ? verdict : "they did");
	ok(lines_naming(log_a, "Work") == 2 && lines_naming(log_b, "Work") == 2,
	   "each log holds the forking thread's enter and leave (%d, %d lines)",
	   lines_naming(log_a, "Work"), lines_naming(log_b, "Work"));
	remove(log_a);
	remove(log_b);

	verdict = run_case(fork_during_walk);
	ok(!*verdict, "a fork while a fini lists the live invocations under a lock the "
	   "fork takes: both finish (%s)", *verdict ? verdict : "they did");
	is_int(elt_shutdown(), ELT_OK, "the parent, which added nothing, shuts down");
	return tap_done();
}
#else
int main(void)
{
	tap_skip_all("no fork() on Windows");
}
#endif
