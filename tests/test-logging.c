/*
 * The logging plugin, loaded as a module as $ASYNCELT_PLUGINS would: N
 * segments of each kind from several threads give exactly N lines of each
 * kind in the JSON Lines and text forms, every JSON line parses, a buffer
 * smaller than a few lines loses nothing, "%p" names the file after the
 * pid, a fork child writes its own file, and bad options are refused with
 * the reason.  Segments come from the producer API (portable).
 */
#include "tap.h"
#include "plugin-output.h"

#include <asyncelt.h>
#include <asyncelt/plugin.h>

#include <pthread.h>
#include <unistd.h>
#if !defined(_WIN32)
# include <sys/wait.h>
#endif

#include "logging-workload.h"

/* Lines of each kind in a file, in either form. */
static void check_kinds(const char *text, int json, unsigned long extra, const char *form)
{
	static const char *const kinds[] = { "call", "suspend", "resume", "return" };
	const unsigned long want[] = { 2 * ALL + extra, ALL, ALL, 2 * ALL + extra };
	char needle[64];
	int k;

	for (k = 0; k < 4; k++) {
		snprintf(needle, sizeof(needle), json ? "\"kind\":\"%s\"" : " kind=%s ", kinds[k]);
		is_int(count_of(text, needle), want[k], "%s: %lu %s lines", form, want[k], kinds[k]);
	}
}

/* A call whose argument, formatted, is longer than a 256-byte buffer. */
static const char big_id;
#define BIG ((elt_function_id)&big_id)

static void big_call(void)
{
	struct { char c[300]; } big;
	void *args[] = { &big };

	memset(&big, 7, sizeof(big));
	elt_emit_enter(BIG, args, NULL);
	elt_emit_leave(BIG, NULL, NULL);
}

int main(void)
{
	const char *prefix = test_prefix("logging");
	char spec[1024], json_path[300], text_path[300], tiny_path[300], bad[300];
	pthread_t threads[THREADS];
	char *text;
	int t, forked = 0;
	long child = 0;

	tap_plan(35);
	if (elt_register_function(WORK, "Work", "l(K i d)", ELT_FUNCTION_ASYNC) ||
	    elt_register_function(PLAIN, "Plain", "v(p)", 0) ||
	    elt_register_function(BIG, "Big", "v({c[300]})", 0))
		tap_bail("register: %s", elt_last_error());

	/* refusals first: a refused plugin takes no slot */
	snprintf(bad, sizeof(bad), "%s.no-such-dir/out.log", prefix);
	snprintf(spec, sizeof(spec), "logging:output=%s", bad);
	is_int(elt_plugin_load(spec), ELT_E_IO, "an unwritable output is refused");
	ok(strstr(elt_last_error(), bad) != NULL, "the error names the path: %s", elt_last_error());
	is_int(elt_plugin_load("logging:format=xml"), ELT_E_BAD_OPTION, "format=xml is refused");
	ok(strstr(elt_last_error(), "xml") != NULL, "the error quotes it: %s", elt_last_error());
	is_int(elt_plugin_load("logging:colour=yes"), ELT_E_BAD_OPTION,
	       "an unknown option is refused");
	is_int(elt_plugin_load("logging:output=/dev/null,output=/dev/null"), ELT_E_BAD_OPTION,
	       "output given twice is refused: %s", elt_last_error());
	is_int(elt_plugin_load("logging:buffer=8"), ELT_E_BAD_OPTION, "buffer=8 is too small");
	/* strtoul took "-5" as 2^64 - 5, and the buffer's size wrapped */
	is_int(elt_plugin_load("logging:buffer=-5"), ELT_E_BAD_OPTION, "buffer=-5 is refused");
	ok(strstr(elt_last_error(), "\"-5\" is not a number from 64 to 1073741824") != NULL,
	   "the error gives the range: %s", elt_last_error());
	is_int(elt_plugin_load("logging:buffer=1073741825"), ELT_E_BAD_OPTION,
	       "a buffer over 1 GiB is refused");

	/* three instances see the same segments: JSON, text, and JSON
	 * through a 256-byte buffer (a line or so: a write per line) */
	snprintf(spec, sizeof(spec), "logging:format=json,output=%s-%%p.jsonl;"
		 "logging:output=%s.txt;logging:format=json,buffer=256,output=%s-tiny.jsonl",
		 prefix, prefix, prefix);
	is_int(elt_plugin_load(spec), ELT_OK, "three logging instances load: %s", elt_last_error());
	snprintf(json_path, sizeof(json_path), "%s-%ld.jsonl", prefix, (long)getpid());
	snprintf(text_path, sizeof(text_path), "%s.txt", prefix);
	snprintf(tiny_path, sizeof(tiny_path), "%s-tiny.jsonl", prefix);
	ok(access(json_path, F_OK) == 0, "%%p in output= is the pid: %s", json_path);

	for (t = 0; t < THREADS; t++)
		if (pthread_create(&threads[t], NULL, worker, (void *)(uintptr_t)t))
			tap_bail("pthread_create failed");
	for (t = 0; t < THREADS; t++)
		pthread_join(threads[t], NULL);
	big_call();

#if !defined(_WIN32)
	{
		pid_t pid = fork();
		int status = -1;

		if (pid == 0) {         /* the child: one call of its own */
			void *pointer = NULL;
			void *args[] = { &pointer };

			elt_emit_enter(PLAIN, args, NULL);
			elt_emit_leave(PLAIN, NULL, NULL);
			_exit(elt_shutdown() == ELT_OK ? 0 : 1);
		}
		if (pid > 0)
			waitpid(pid, &status, 0);
		ok(pid > 0 && WIFEXITED(status) && WEXITSTATUS(status) == 0,
		   "a fork child logs and exits cleanly");
		forked = pid > 0;
		child = (long)pid;
	}
#else
	tap_skip(1, "no fork on Windows");
#endif
	is_int(elt_shutdown(), ELT_OK, "shutdown writes every buffer out");

	text = slurp(json_path);
	check_kinds(text, 1, 1, "JSON Lines");
	ok(count_of(text, "\"args\":[7,0.5]") == ALL &&
	   count_of(text, "\"args\":[\"0xfeed\"]") == ALL, "calls carry their decoded arguments");
	is_int(count_of(text, "\"ret\":42"), ALL, "returns carry the value");
	ok(count_of(text, "\"ret_incomplete\":true") == ALL &&
	   count_of(text, "\"args_incomplete\":true") == ALL,
	   "suspensions and resumes are marked incomplete");
	free(text);
	check_with_python("--jsonl", json_path, "every JSON line parses");

	text = slurp(text_path);
	check_kinds(text, 0, 1 + (unsigned long)forked, "text");
	ok(count_of(text, " args=(7, 0.5)") == ALL && count_of(text, " args=(0xfeed)") == ALL,
	   "text: the arguments");
	ok(count_of(text, " ret=<incomplete>") == ALL && count_of(text, " args=<incomplete>") == ALL,
	   "text: the incomplete markers");
	free(text);

	text = slurp(tiny_path);
	check_kinds(text, 1, 1 + (unsigned long)forked,
		    "256-byte buffer (the child appends to it too)");
	is_int(count_of(text, "\"args\":[\"...\"]"), 1,
	       "256-byte buffer: the 300-byte argument, longer than it, is \"...\"");
	free(text);
	check_with_python("--jsonl", tiny_path, "the 256-byte buffer's lines all parse, "
			  "the one with the cut value too");

	if (forked) {
		char child_path[300];

		snprintf(child_path, sizeof(child_path), "%s-%ld.jsonl", prefix, child);
		text = slurp(child_path);
		ok(count_of(text, "\n") == 2 && count_of(text, "\"kind\":\"call\"") == 1 &&
		   count_of(text, "\"kind\":\"return\"") == 1,
		   "the child wrote its own file, with only its own lines");
		free(text);
		unlink(child_path);
	} else {
		tap_skip(1, "no fork");
	}
	unlink(json_path);
	unlink(text_path);
	unlink(tiny_path);
	return tap_done();
}
