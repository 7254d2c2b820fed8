/*
 * Threads ending while the library shuts down (issue 12 item 1): many
 * threads write through the logging plugin, then exit at the moment the
 * main thread calls elt_shutdown().  Whatever the order, nothing touches
 * the plugin's freed buffers (run it under ASan or valgrind to see), and
 * every line of a segment reported before the shutdown began is in the
 * file, once.  Each round runs in a fork child: the library starts once
 * per process.
 */
#include "tap.h"

#include <asyncelt.h>
#include <asyncelt/plugin.h>

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <errno.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define THREADS 64
#define SEGMENTS 20             /* Enter+Leave pairs per thread */
#define ROUNDS 5

static const elt_function_id WORK = 0x100;
static atomic_int emitted, go;

static void *worker(void *arg)
{
	int i;

	(void)arg;
	for (i = 0; i < SEGMENTS; i++) {
		elt_emit_enter(WORK, NULL, NULL);
		elt_emit_leave(WORK, NULL, NULL);
	}
	atomic_fetch_add(&emitted, 1);
	/* Exit with the shutdown: some before it, some during, some after. */
	while (!atomic_load(&go))
		sched_yield();
	return NULL;
}

/* One round in a child: 0 when the file has every line. */
static int round_in_child(const char *path)
{
	char spec[512];
	pthread_t t[THREADS];
	int i;

	snprintf(spec, sizeof(spec), "logging:output=%s,buffer=4096", path);
	if (elt_register_function(WORK, "Work", "v()", 0) != ELT_OK ||
	    elt_plugin_load(spec) != ELT_OK)
		return 10;
	for (i = 0; i < THREADS; i++)
		pthread_create(&t[i], NULL, worker, NULL);
	while (atomic_load(&emitted) < THREADS)
		sched_yield();
	atomic_store(&go, 1);
	if (elt_shutdown() != ELT_OK)
		return 11;
	for (i = 0; i < THREADS; i++)
		pthread_join(t[i], NULL);
	return 0;
}

static long count_lines(const char *path)
{
	FILE *f = fopen(path, "r");
	long n = 0;
	int c;

	if (!f)
		return -1;
	while ((c = getc(f)) != EOF)
		n += c == '\n';
	fclose(f);
	return n;
}

int main(void)
{
	char path[] = "/tmp/asyncelt-exit-race-XXXXXX";
	int fd = mkstemp(path), r;

	if (fd < 0)
		tap_bail("mkstemp: %s", strerror(errno));
	close(fd);
	for (r = 0; r < ROUNDS; r++) {
		int status = -1;
		pid_t pid = fork();
		long lines;

		if (pid == 0)
			_exit(round_in_child(path));
		waitpid(pid, &status, 0);
		lines = count_lines(path);
		ok(WIFEXITED(status) && WEXITSTATUS(status) == 0 &&
		   lines == 2L * THREADS * SEGMENTS,
		   "round %d: %d threads ending with the shutdown: clean exit (status %d), "
		   "%ld of %d lines", r + 1, THREADS, WIFEXITED(status) ? WEXITSTATUS(status) : -1,
		   lines, 2 * THREADS * SEGMENTS);
	}
	unlink(path);
	return tap_done();
}
