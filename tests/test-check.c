/*
 * The check plugin fails when it should (a Leave without an Enter, a
 * continuation suspended twice, one resumed twice, a wrong pair count) and
 * says which; checks for the whole run (200,000 sequential invocations,
 * each with a continuation of its own); and never says PASS over what it
 * could not check (max-pending reached: INCOMPLETE, with the count, and no
 * invented error); a spec it refuses leaves the file it names as it was.
 */
#define ELT_PLUGIN_STATIC 1
#include "tap.h"
#include "probes.h"

#include <asyncelt.h>
#include <asyncelt/plugin.h>

#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

extern const elt_plugin elt_plugin_check;

static const elt_function_id ASYNC_ID = 0x100, PLAIN_ID = 0x200, SEQ_ID = 0x300,
	OVER_ID = 0x400;
#define SEQUENTIAL 200000

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

struct report {
	char path[64];
	char text[8192];
};

/* Adds a check instance writing to a temporary file. */
static void add_check(struct report *r, const char *options)
{
	char spec[256];
	int fd;

	snprintf(r->path, sizeof(r->path), "/tmp/asyncelt-check-XXXXXX");
	fd = mkstemp(r->path);
	if (fd < 0)
		tap_bail("mkstemp failed");
	close(fd);      /* the plugin opens it by name: Windows refuses while open */
	snprintf(spec, sizeof(spec), "%s,output=%s", options, r->path);
	if (elt_plugin_add(&elt_plugin_check, spec) != ELT_OK)
		tap_bail("check:%s: %s", spec, elt_last_error());
}

static void read_report(struct report *r)
{
	int fd = open(r->path, O_RDONLY);
	ssize_t n = fd < 0 ? -1 : read(fd, r->text, sizeof(r->text) - 1);

	r->text[n > 0 ? n : 0] = '\0';
	if (fd >= 0)
		close(fd);
	unlink(r->path);
}

#define HAS(r, s) (strstr((r)->text, (s)) != NULL)

/* A refused spec must not have emptied the report of the last run. */
static void check_refused_keeps_output(void)
{
	struct report kept;
	char spec[128];
	int fd;

	snprintf(kept.path, sizeof(kept.path), "/tmp/asyncelt-check-XXXXXX");
	fd = mkstemp(kept.path);
	if (fd < 0 || write(fd, "keep\n", 5) != 5)
		tap_bail("mkstemp or write failed");
	close(fd);
	snprintf(spec, sizeof(spec), "output=%s,bogus=1", kept.path);
	is_int(elt_plugin_add(&elt_plugin_check, spec), ELT_E_BAD_OPTION,
	       "an unknown option after output= is refused");
	read_report(&kept);
	is_str(kept.text, "keep\n", "and the file output= named is left as it was");
	is_int(elt_plugin_add(&elt_plugin_check, "output="), ELT_E_BAD_OPTION,
	       "an empty output= is refused: %s", elt_last_error());
	/* an empty $LIST in "expect=$LIST" would pass, checking nothing */
	is_int(elt_plugin_add(&elt_plugin_check, "expect="), ELT_E_BAD_OPTION,
	       "an empty expect= is refused: %s", elt_last_error());
}

int main(void)
{
	struct report errors, sequential, bounded;
	uintptr_t k;

	check_refused_keeps_output();

	/* 1. sequence errors, seen by the first instance only */
	add_check(&errors, "expect=Async:3,Plain:1");
	if (elt_register_function(ASYNC_ID, "Async", "l(K i)", ELT_FUNCTION_ASYNC) ||
	    elt_register_function(PLAIN_ID, "Plain", "l(p i)", 0) ||
	    elt_register_function(SEQ_ID, "Seq", "l(K i)", ELT_FUNCTION_ASYNC) ||
	    elt_register_function(OVER_ID, "Over", "l(K i)", ELT_FUNCTION_ASYNC))
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

	/* 2. a long run: one invocation suspended at a time, each with a
	 * continuation of its own, all checked to the last */
	add_check(&sequential, "expect=Seq:400000");
	add_check(&bounded, "max-pending=2,expect=Seq:400000,Over:6");
	for (k = 0x10000; k < 0x10000 + 16 * (uintptr_t)SEQUENTIAL; k += 16) {
		enter(SEQ_ID, 0);
		leave(SEQ_ID, k);
		enter(SEQ_ID, k);
		leave(SEQ_ID, 0);
	}

	/* 3. three suspended at once: one more than `bounded` may track */
	for (k = 0xc0; k < 0xf0; k += 0x10) {
		enter(OVER_ID, 0);
		leave(OVER_ID, k);
	}
	for (k = 0xc0; k < 0xf0; k += 0x10) {
		enter(OVER_ID, k);
		leave(OVER_ID, 0);
	}

	is_int(elt_shutdown(), ELT_E_CHECK_FAILED, "shutdown reports the failed checks");
	read_report(&errors);
	read_report(&sequential);
	read_report(&bounded);

	ok(HAS(&errors, "sequence error: Leave or Tailcall with no Enter of that "
	       "function running: 1"), "a Leave without Enter is reported");
	ok(HAS(&errors, "sequence error: continuation suspended twice without a resume: 1"),
	   "a double suspension is reported");
	ok(HAS(&errors, "sequence error: continuation resumed twice without a suspension: 1"),
	   "a double resume is reported");
	ok(HAS(&errors, "suspended and never resumed: 1\n") &&
	   HAS(&errors, "resumed and never suspended: 1\n"), "open continuations at exit");
	ok(HAS(&errors, "expect Async: 3 pairs: FAIL (4 Enter and 4 Leave callbacks, "
	       "want 3 of each)"), "a wrong pair count, with the reason");
	ok(HAS(&errors, "expect Plain: 1 pairs: FAIL (0 Enter and 1 Leave"),
	   "an unbalanced function");
	ok(HAS(&errors, "\ncheck: FAIL (0 of 2 expectations met;"), "the verdict: FAIL");
	if (!HAS(&errors, "check: FAIL"))
		tap_diag("report:\n%s", errors.text);

	ok(HAS(&sequential, "expect Seq: 400000 pairs: PASS\n") &&
	   HAS(&sequential, "\ncheck: PASS (1 of 1 expectations met; 400006 pairs, "
	       "400006 suspensions and resumes checked, 0 not)\n"),
	   "200,000 sequential invocations: every suspension and resume checked, PASS");
	ok(HAS(&sequential, "continuations pending at once, at most: 3\n"),
	   "the table holds only what is outstanding");
	if (!HAS(&sequential, "check: PASS"))
		tap_diag("report:\n%s", sequential.text);

	ok(HAS(&bounded, "continuations pending at once, at most: 2\n") &&
	   HAS(&bounded, "suspensions and resumes not checked (max-pending reached, "
	       "or out of memory): 2\n"),
	   "max-pending=2: the third suspension and its resume are counted unchecked");
	ok(!HAS(&bounded, "never suspended") && !HAS(&bounded, "sequence error"),
	   "an unrecorded suspension's resume is not called an error");
	ok(HAS(&bounded, "\ncheck: INCOMPLETE (2 of 2 expectations met; 400006 pairs, "
	       "400004 suspensions and resumes checked, 2 not)\n"),
	   "the verdict over unchecked pairs is INCOMPLETE, with the count");
	if (!HAS(&bounded, "check: INCOMPLETE"))
		tap_diag("report:\n%s", bounded.text);
	return tap_done();
}
