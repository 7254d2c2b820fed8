/*
 * exit() on one thread while another is inside elt_shutdown: the
 * library's exit handler must wait for the plugins' fini to finish, or
 * the process ends with their reports and files cut short.  A child
 * process does it; its plugin's fini, which takes a while, writes a byte
 * to a pipe when it is done, and the parent reads it.
 *
 * And fork() while another thread is inside elt_shutdown: the child has
 * no thread running that shutdown, so its exit must not wait for it (it
 * waited 5 s, the limit, then said so).
 */
#define ELT_PLUGIN_STATIC
#include "tap.h"

#include <asyncelt.h>
#include <asyncelt/plugin.h>

#if defined(_WIN32)
int main(void)
{
	tap_skip_all("fork() and pipes: not on Windows");
}
#else
#include <pthread.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static int report_fd = -1;

static elt_status slow_fini(void *state)
{
	(void)state;
	nanosleep(&(struct timespec){ 0, 300 * 1000 * 1000 }, NULL);
	if (write(report_fd, "R", 1) != 1)
		return ELT_E_IO;
	return ELT_OK;
}

ELT_PLUGIN_DEFINE(slow_report, .fini = slow_fini, .flags = ELT_PLUGIN_NO_INVOCATIONS);

static _Atomic int in_fini;
static int release_fd = -1;     /* fini waits for a byte here */

static elt_status held_fini(void *state)
{
	char byte;

	(void)state;
	in_fini = 1;
	return read(release_fd, &byte, 1) == 1 ? ELT_OK : ELT_E_IO;
}

ELT_PLUGIN_DEFINE(held_report, .fini = held_fini, .flags = ELT_PLUGIN_NO_INVOCATIONS);

static void *shut_down(void *arg)
{
	(void)arg;
	elt_shutdown();
	return NULL;
}

/* In a process of its own: a child forked during the shutdown exits,
 * within 3 s, before the shutdown may finish; returns its status. */
static int fork_during_shutdown(void)
{
	int release[2], status = -1;
	pthread_t t;
	pid_t child;

	alarm(20);      /* a fini that never starts ends the test here */
	if (pipe(release) != 0)
		return -1;
	release_fd = release[0];
	if (elt_plugin_add(&elt_plugin_held_report, NULL) != ELT_OK)
		return -1;
	pthread_create(&t, NULL, shut_down, NULL);
	while (!in_fini)
		nanosleep(&(struct timespec){ 0, 1000 * 1000 }, NULL);
	child = fork();
	if (child == 0) {
		alarm(3);       /* still waiting then: killed, and the test fails */
		exit(0);
	}
	if (child > 0)
		waitpid(child, &status, 0);
	if (write(release[1], "G", 1) != 1)
		return -1;
	pthread_join(t, NULL);
	return status;
}

static void *exit_soon(void *arg)
{
	(void)arg;
	nanosleep(&(struct timespec){ 0, 50 * 1000 * 1000 }, NULL);
	exit(0);        /* while main is in slow_fini */
}

int main(void)
{
	int fds[2], status = -1;
	char byte = 0;
	pid_t pid;

	tap_plan(3);
	if (pipe(fds) != 0)
		tap_bail("pipe failed");
	pid = fork();
	if (pid == 0) {
		pthread_t t;

		close(fds[0]);
		report_fd = fds[1];
		alarm(20);
		elt_plugin_add(&elt_plugin_slow_report, NULL);
		pthread_create(&t, NULL, exit_soon, NULL);
		elt_shutdown();
		pthread_join(t, NULL);  /* the other thread's exit ends it */
		_exit(1);
	}
	close(fds[1]);
	ok(pid > 0 && read(fds[0], &byte, 1) == 1 && byte == 'R',
	   "the report written in fini reached its end before the process exited");
	if (pid > 0)
		waitpid(pid, &status, 0);
	ok(WIFEXITED(status) && WEXITSTATUS(status) == 0,
	   "the process ended with the exit status of its exit() (status %d)", status);

	status = -1;
	pid = fork();
	if (pid == 0) {
		int child_status = fork_during_shutdown();

		_exit(WIFEXITED(child_status) && WEXITSTATUS(child_status) == 0 ? 0 : 1);
	}
	if (pid > 0)
		waitpid(pid, &status, 0);
	ok(WIFEXITED(status) && WEXITSTATUS(status) == 0,
	   "a child forked during another thread's shutdown exits without waiting for it "
	   "(status %d)", status);
	return tap_done();
}
#endif
