/*
 * For the tests that fork while another thread is held half way through
 * a step (tests/test-fork-table.c, tests/test-fork-locks.c): the child
 * runs under an alarm, and its end, read by the parent, says whether it
 * stalled.  The parent's wait with a deadline serves them and
 * tests/test-fork-in-fini.c.
 */
#ifndef ELT_TESTS_FORK_CHILD_H
#define ELT_TESTS_FORK_CHILD_H

#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

#define CHILD_SECONDS 20        /* a child still running then has stalled */
/* The parent's own limit: the child's alarm starts only once the fork's
 * child handlers, code under test, have returned. */
#define PARENT_SECONDS (CHILD_SECONDS + 10)

/*
 * Waits for the child `pid` at most `seconds`, then kills it: 1 when it
 * ended (*status says how), 0 when it was still running, -1 when waitpid
 * failed.  Polled, so that a parent with signals blocked can use it.
 */
static inline int wait_child_or_kill(pid_t pid, int seconds, int *status)
{
	pid_t got;
	int waited;

	for (waited = 0; (got = waitpid(pid, status, WNOHANG)) == 0; waited++) {
		if (waited == seconds * 100) {
			kill(pid, SIGKILL);
			waitpid(pid, status, 0);
			return 0;
		}
		usleep(10 * 1000);
	}
	return got == pid ? 1 : -1;
}

/*
 * Forks while `helper` is held.  The child runs work() (0: all right) and
 * ends with its result; the parent sets *release, which lets the helper
 * go on, joins it, and returns "" when the child ended with 0, else what
 * went wrong.
 */
static inline const char *fork_and_judge(int (*work)(void), atomic_int *release,
					 pthread_t helper)
{
	static char verdict[96];
	pid_t pid = fork();
	int status, ended;

	if (pid == 0) {
		alarm(CHILD_SECONDS);
		_exit(work());
	}
	atomic_store(release, 1);
	pthread_join(helper, NULL);
	if (pid < 0)
		return "fork failed";
	ended = wait_child_or_kill(pid, PARENT_SECONDS, &status);
	if (ended < 0)
		return "waitpid failed";
	if (!ended) {
		snprintf(verdict, sizeof(verdict), "the child stalled in the fork's "
			 "handlers: killed after %d s", PARENT_SECONDS);
		return verdict;
	}
	if (WIFSIGNALED(status) && WTERMSIG(status) == SIGALRM)
		snprintf(verdict, sizeof(verdict), "the child stalled: still running after %d s",
			 CHILD_SECONDS);
	else if (!WIFEXITED(status) || WEXITSTATUS(status))
		snprintf(verdict, sizeof(verdict), "the child ended with status %d",
			 WIFEXITED(status) ? WEXITSTATUS(status) : -1);
	else
		verdict[0] = 0;
	return verdict;
}

#endif
