/*
 * exit() on one thread while another is inside elt_shutdown: the
 * library's exit handler must wait for the plugins' fini to finish, or
 * the process ends with their reports and files cut short.  A child
 * process does it; its plugin's fini, which takes a while, writes a byte
 * to a pipe when it is done, and the parent reads it.
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

	tap_plan(2);
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
	return tap_done();
}
#endif
