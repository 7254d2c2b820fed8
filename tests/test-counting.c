/*
 * The counting plugin's checks fail when they should: a Leave without an
 * Enter, a continuation suspended twice, one resumed twice, a wrong pair
 * count; and its report says which.
 */
#define ELT_PLUGIN_STATIC 1
#include "tap.h"
#include "probes.h"

#include <asyncelt.h>
#include <asyncelt/plugin.h>

#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

extern const elt_plugin elt_plugin_counting;

static const elt_function_id ASYNC_ID = 0x100, PLAIN_ID = 0x200;

static int64_t zero(void)
{
	return 0;
}

static void enter(elt_function_id id, uintptr_t k)
{
	probe_function = id;
	PROBE_AS(void (*)(uintptr_t, int32_t), probe_enter)(k, 1);
}

static void leave(elt_function_id id, uintptr_t k)
{
	probe_function = id;
	probe_target = (void (*)(void))zero;
	probe_continuation = k;
	PROBE_AS(int64_t (*)(void), probe_leave)();
}

int main(void)
{
	char path[] = "/tmp/asyncelt-counting-XXXXXX", options[128], report[4096];
	int fd = mkstemp(path);
	ssize_t n;

	if (fd < 0)
		tap_bail("mkstemp failed");
	/* the plugin opens it by name: Windows refuses while fd has it open */
	close(fd);
	snprintf(options, sizeof(options), "expect=Async:3,Plain:1,output=%s", path);
	if (elt_plugin_add(&elt_plugin_counting, options) != ELT_OK ||
	    elt_register_function(ASYNC_ID, "Async", "l(K i)", ELT_FUNCTION_ASYNC) ||
	    elt_register_function(PLAIN_ID, "Plain", "l(p i)", 0))
		tap_bail("setup: %s", elt_last_error());

	leave(PLAIN_ID, 0);                     /* no Enter */
	enter(ASYNC_ID, 0);
	leave(ASYNC_ID, 0xa0);                  /* suspends with 0xa0 */
	enter(ASYNC_ID, 0);
	leave(ASYNC_ID, 0xa0);                  /* 0xa0 again, never resumed */
	enter(ASYNC_ID, 0xb0);                  /* resumes 0xb0, never suspended */
	leave(ASYNC_ID, 0);
	enter(ASYNC_ID, 0xb0);                  /* and again */
	leave(ASYNC_ID, 0);

	is_int(elt_shutdown(), ELT_E_CHECK_FAILED, "shutdown reports the failed checks");
	fd = open(path, O_RDONLY);
	n = fd < 0 ? -1 : read(fd, report, sizeof(report) - 1);
	report[n > 0 ? n : 0] = '\0';
	if (fd >= 0)
		close(fd);
	unlink(path);
	ok(strstr(report, "sequence error: Leave or Tailcall with no Enter of that "
		  "function running: 1") != NULL, "a Leave without Enter is reported");
	ok(strstr(report, "sequence error: continuation suspended twice without a resume: 1"),
	   "a double suspension is reported");
	ok(strstr(report, "sequence error: continuation resumed without a suspension: 1"),
	   "a double resume is reported");
	ok(strstr(report, "suspended and never resumed: 1") &&
	   strstr(report, "resumed and never suspended: 1"), "open continuations at exit");
	ok(strstr(report, "expect Async: 3 pairs: FAIL (4 Enter and 4 Leave callbacks, "
		  "want 3 of each)") != NULL, "a wrong pair count, with the reason");
	ok(strstr(report, "expect Plain: 1 pairs: FAIL (0 Enter and 1 Leave") != NULL,
	   "an unbalanced function");
	ok(strstr(report, "counting: FAIL (0 of 2 expectations met)") != NULL, "the verdict");
	if (!strstr(report, "counting: FAIL"))
		tap_diag("report:\n%s", report);
	return tap_done();
}
