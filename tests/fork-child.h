/*
 * For the tests that fork while another thread is held half way through
 * a step (tests/test-fork-table.c, tests/test-fork-locks.c): the child
 * runs under an alarm, and its end, read by the parent, says whether it
 * stalled.
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
 * Forks while `helper` is held.  The child runs work() (0: all right) and
 * ends with its result; the parent sets *release, which lets the helper
 * go on, joins it, and returns "" when the child ended with 0, else what
 * went wrong.
 */
static inline const char *fork_and_judge(int (*work)(void), atomic_int *release,
					 pthread_t helper)
{
	static char verdict[96];
	pid_t pid = fork(), got;
	int status, waited;

	if (pid == 0) {
		alarm(CHILD_SECONDS);
		_exit(work());
	}
	atomic_store(release, 1);
	pthread_join(helper, NULL);
	if (pid < 0)
		return "fork failed";
	for (waited = 0; (got = waitpid(pid, &status, WNOHANG)) == 0; waited++) {
		if (waited == PARENT_SECONDS * 10) {
			kill(pid, SIGKILL);
			waitpid(pid, &status, 0);
			snprintf(verdict, sizeof(verdict), "the child stalled in the fork's "
				 "handlers: killed after %d s", PARENT_SECONDS);
			return verdict;
		}
		usleep(100 * 1000);
	}
	if (got != pid)
		return "waitpid failed";
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
