/*
 * logging:format=binary, loaded as a module as $ASYNCELT_PLUGINS would,
 * read back with asyncelt-dump's own parser (tools/dump/read.c): N
 * segments of each kind from several threads give exactly N records of
 * each kind, with their values' bytes and continuations, through a normal
 * buffer and the smallest one (128 bytes: a write every few records,
 * nothing lost, nothing split); a value longer than that buffer is left
 * out of it and its record says so, whole; functions with names longer
 * than that buffer, registered while another thread records, are defined
 * whole in both files; an unregistered function, a Leave matching no Enter, an
 * orphan resume and a tailcall are each recorded as such; the file names
 * its pid, its buffer and its functions; a fork child's file (%p) names
 * the functions again and holds only its own records; format=binary
 * without output= or with a smaller buffer is refused.  A format=json
 * instance records the same run live: asyncelt-dump's JSON Lines of the
 * recording (tools/dump/lines.c) are its lines, field for field, but the
 * times.  Segments come from the producer API.
 */
#include "tap.h"
#include "plugin-output.h"
#include "../tools/dump/output.h"
#include "../tools/dump/read.h"
#include "../plugins/logging/recording.h"

#include <asyncelt.h>
#include <asyncelt/plugin.h>

#include <pthread.h>
#include <stdatomic.h>
#include <unistd.h>
#if !defined(_WIN32)
# include <sys/wait.h>
#endif

#include "logging-workload.h"

struct tally {
	unsigned long kinds[REC_KIND_COUNT];
	unsigned long work_args_ok, ret_ok, suspends_with_k, resumes_matched;
	unsigned long unordered;        /* a thread's records out of time order */
	unsigned long big_value, big_incomplete; /* Big's calls: with its bytes, without */
	unsigned long medium_value;     /* Medium's calls with its bytes */
	unsigned long calls_on[THREADS + 8];    /* calls by thread index */
	unsigned long threads_right;    /* threads with 2 calls per invocation */
	/* odd_segments(), each as its record should be */
	unsigned long unregistered, unbalanced, orphan, tailcall, many;
};

/* A call whose argument is longer than the 128-byte buffer, and one
 * whose argument fits in it only because the record's other fields are
 * short (the writer's rare path, which measures the record exactly). */
static const elt_function_id BIG = 0x300, MEDIUM = 0x301;
#define BIG_SIZE 200
#define MEDIUM_SIZE 80

static unsigned char value_byte(uint32_t i)
{
	return (unsigned char)(i * 7 + 1);
}

static void value_call(elt_function_id id, size_t size)
{
	unsigned char v[BIG_SIZE];
	void *args[] = { v };
	size_t i;

	for (i = 0; i < size; i++)
		v[i] = value_byte((uint32_t)i);
	elt_emit_enter(id, args, NULL);
	elt_emit_leave(id, NULL, NULL);
}

/* Segments the usual workload has none of: an unregistered function's
 * call and return (no name, no value), a Leave matching no Enter (no
 * invocation), a resume of a continuation never seen suspending (an
 * orphan), a tailcall, and a call of more arguments than a record holds
 * (REC_ARGS_MAX: no value).  Each is recorded as itself and counted
 * apart; check_same_as_live() then finds the reader giving the reasons
 * the live lines give. */
static const elt_function_id ODD = 0x500, ODD_ASYNC = 0x501, UNREGISTERED_ID = 0x5ff,
			     MANY = 0x502;
#define ODD_CONTINUATION ((void *)(uintptr_t)0x5eed)
#define MANY_SIGNATURE "v(i i i i i i i i i i i i i i i i i)"

static void odd_segments(void)
{
	int many[REC_ARGS_MAX + 1] = { 0 };
	void *many_args[REC_ARGS_MAX + 1];
	size_t i;

	for (i = 0; i < REC_ARGS_MAX + 1; i++)
		many_args[i] = &many[i];
	elt_emit_enter(MANY, many_args, NULL);
	elt_emit_leave(MANY, NULL, NULL);
	elt_emit_enter(UNREGISTERED_ID, NULL, NULL);
	elt_emit_leave(UNREGISTERED_ID, NULL, NULL);
	elt_emit_leave(ODD, NULL, NULL);
	elt_emit_enter(ODD_ASYNC, NULL, ODD_CONTINUATION);
	elt_emit_leave(ODD_ASYNC, NULL, NULL);
	elt_emit_enter(ODD, NULL, NULL);
	elt_emit_tailcall(ODD, NULL);
}

/* 1 when e is one of odd_segments()'s, counted in t. */
static int tally_odd(const struct dump_event *e, const char *name, struct tally *t)
{
	unsigned value = e->flags & (REC_VALUE | REC_INCOMPLETE);

	if (e->function == REC_UNREGISTERED) {
		t->unregistered += (e->kind == REC_CALL || e->kind == REC_RETURN) && !value &&
				   !(e->flags & REC_NO_INVOCATION);
		return 1;
	}
	if (!strcmp(name, "Odd")) {
		if (e->kind == REC_RETURN)
			t->unbalanced += (e->flags & REC_NO_INVOCATION) &&
					 value == REC_VALUE && e->value_len == 0;
		t->tailcall += e->kind == REC_TAILCALL && !value &&
			       !(e->flags & REC_NO_INVOCATION);
		return 1;
	}
	if (!strcmp(name, "Many")) {
		t->many += e->kind == REC_CALL && !value;
		return 1;
	}
	if (!strcmp(name, "OddAsync")) {
		t->orphan += e->kind == REC_RESUME && (e->flags & REC_ORPHAN) &&
			     e->parent_or_continuation == (uintptr_t)ODD_CONTINUATION;
		return 1;
	}
	return 0;
}

/* Functions whose records are longer than the 128-byte buffer, registered
 * while a thread records Noise: each record must still reach the file in
 * one write.  Their names: "Long_" and a number, padded to LONG_NAME. */
#define LONG_FUNCTIONS 1000
#define LONG_NAME 200
static const elt_function_id NOISE = 0x400, LONG_BASE = 0x10000;
static atomic_int registering = 1;

static void long_name(char *name, unsigned i)
{
	int n = snprintf(name, LONG_NAME + 1, "Long_%u_", i);

	memset(name + n, 'x', (size_t)(LONG_NAME - n));
	name[LONG_NAME] = '\0';
}

static void *noise(void *arg)
{
	(void)arg;
	while (atomic_load(&registering)) {
		elt_emit_enter(NOISE, NULL, NULL);
		elt_emit_leave(NOISE, NULL, NULL);
	}
	return NULL;
}

static void register_long_functions(void)
{
	char name[LONG_NAME + 1];
	pthread_t thread;
	unsigned i;

	if (pthread_create(&thread, NULL, noise, NULL))
		tap_bail("pthread_create failed");
	for (i = 0; i < LONG_FUNCTIONS; i++) {
		long_name(name, i);
		if (elt_register_function(LONG_BASE + i, name, "v()", 0) != ELT_OK)
			tap_bail("register %s: %s", name, elt_last_error());
	}
	atomic_store(&registering, 0);
	pthread_join(thread, NULL);
}

/* How many of the long functions the file defines, with their names. */
static unsigned long_functions_defined(const struct dump_file *f)
{
	char name[LONG_NAME + 1];
	unsigned i, n = 0, defined = 0;

	for (i = 0; i < f->nfunctions; i++)
		if (f->functions[i].defined && f->functions[i].id >= LONG_BASE &&
		    f->functions[i].id < LONG_BASE + LONG_FUNCTIONS) {
			long_name(name, (unsigned)(f->functions[i].id - LONG_BASE));
			defined += !strcmp(f->functions[i].name, name);
			n++;
		}
	return n == defined ? defined : 0;
}

static int value_bytes_ok(const uint8_t *p, uint32_t n, uint32_t size)
{
	uint32_t i;

	if (n != size)
		return 0;
	for (i = 0; i < n; i++)
		if (p[i] != value_byte(i))
			return 0;
	return 1;
}

static void tally_file(const struct dump_file *f, struct tally *t)
{
	uint64_t last[THREADS + 8] = { 0 };
	size_t i;

	memset(t, 0, sizeof(*t));
	for (i = 0; i < f->nevents; i++) {
		const struct dump_event *e = &f->events[i];
		const char *name = e->function < f->nfunctions && f->functions[e->function].defined
				   ? f->functions[e->function].name : "?";
		int32_t i32;
		double d;
		int64_t ret;

		if (!strcmp(name, "Noise") || tally_odd(e, name, t))
			continue;
		if (!strcmp(name, "Medium")) {
			if (e->kind == REC_CALL && (e->flags & REC_VALUE))
				t->medium_value += value_bytes_ok(e->value, e->value_len,
								  MEDIUM_SIZE);
			continue;
		}
		if (!strcmp(name, "Big")) {
			if (e->kind == REC_CALL && (e->flags & REC_VALUE))
				t->big_value += value_bytes_ok(e->value, e->value_len, BIG_SIZE);
			if (e->kind == REC_CALL && (e->flags & REC_INCOMPLETE) &&
			    !(e->flags & REC_VALUE) && !e->value)
				t->big_incomplete++;
			continue;
		}
		t->kinds[e->kind]++;
		if (e->kind == REC_CALL && e->thread < THREADS + 8)
			t->calls_on[e->thread]++;
		if (e->thread < THREADS + 8) {
			t->unordered += e->time < last[e->thread];
			last[e->thread] = e->time;
		}
		if (e->kind == REC_CALL && !strcmp(name, "Work") && (e->flags & REC_VALUE) &&
		    e->value_len == sizeof(i32) + sizeof(d)) {
			memcpy(&i32, e->value, sizeof(i32));
			memcpy(&d, e->value + sizeof(i32), sizeof(d));
			t->work_args_ok += i32 == 7 && d == 0.5;
		}
		if (e->kind == REC_RETURN && !strcmp(name, "Work") && (e->flags & REC_VALUE) &&
		    e->value_len == sizeof(ret)) {
			memcpy(&ret, e->value, sizeof(ret));
			t->ret_ok += ret == 42;
		}
		if (e->kind == REC_SUSPEND && e->parent_or_continuation)
			t->suspends_with_k++;
		if (e->kind == REC_RESUME && e->segment == 1 && e->parent_or_continuation)
			t->resumes_matched++;
	}
	for (i = 0; i < THREADS + 8; i++)
		t->threads_right += t->calls_on[i] == 2 * INVOCATIONS;
}

static int read_recording(const char *path, struct dump_file *f, char **data)
{
	char error[512];
	FILE *file = fopen(path, "rb");
	size_t size;

	*data = slurp(path);
	if (!file)
		return 0;
	fseek(file, 0, SEEK_END);
	size = (size_t)ftell(file);
	fclose(file);
	if (dump_parse(*data, size, path, f, error, sizeof(error)) != ELT_OK) {
		tap_diag("%s", error);
		return 0;
	}
	return 1;
}

static void check_recording(const char *path, const char *what)
{
	struct dump_file f;
	struct tally t;
	char *data;

	if (!read_recording(path, &f, &data)) {
		int i;

		for (i = 0; i < 8; i++)         /* failures, never skips */
			ok(0, "%s: the recording is readable", what);
		free(data);
		return;
	}
	ok(!f.truncated && f.closed && f.pid == (long)getpid() && f.buffer == 64 * 1024,
	   "%s: whole and closed, the pid and the 64 KiB buffer in its preamble", what);
	tally_file(&f, &t);
	ok(t.kinds[REC_CALL] == 2 * ALL && t.kinds[REC_SUSPEND] == ALL &&
	   t.kinds[REC_RESUME] == ALL && t.kinds[REC_RETURN] == 2 * ALL,
	   "%s: %lu calls, %lu suspensions, %lu resumes, %lu returns", what,
	   t.kinds[REC_CALL], t.kinds[REC_SUSPEND], t.kinds[REC_RESUME], t.kinds[REC_RETURN]);
	ok(t.work_args_ok == ALL && t.ret_ok == ALL,
	   "%s: every Work call carries (7, 0.5), every return 42", what);
	ok(t.suspends_with_k == ALL && t.resumes_matched == ALL,
	   "%s: suspensions and resumes carry their continuation and segment", what);
	ok(t.big_value == 1 && t.big_incomplete == 0 && t.medium_value == 1,
	   "%s: the 200-byte and 80-byte arguments recorded whole", what);
	ok(t.unregistered == 2 && t.unbalanced == 1 && t.orphan == 1 && t.tailcall == 1 &&
	   t.many == 1,
	   "%s: an unregistered call and return, a Leave matching no Enter, an orphan "
	   "resume, a tailcall and a call of %d arguments each recorded as such", what,
	   REC_ARGS_MAX + 1);
	ok(long_functions_defined(&f) == LONG_FUNCTIONS,
	   "%s: %u functions with %d-byte names, registered while another thread "
	   "recorded, all defined", what, long_functions_defined(&f), LONG_NAME);
	ok(t.unordered == 0 && t.threads_right == THREADS && f.nfunctions >= 2 &&
	   !strcmp(f.functions[0].name, "Work") &&
	   !strcmp(f.functions[0].signature_text, "l(K i d)"),
	   "%s: each thread's records its own, in order; functions named with signatures",
	   what);
	dump_file_free(&f);
	free(data);
}

static int by_text(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The lines of a file (or stream), each without its "ts_ns" field (the
 * two instances read the clock apart), sorted: threads interleave in
 * another order live than in time. */
static char **timeless_lines(FILE *in, size_t *count)
{
	char **lines = NULL, line[4096];
	size_t n = 0, cap = 0;

	while (fgets(line, sizeof(line), in)) {
		const char *rest = strchr(line, ',');

		if (n == cap) {
			char **more = realloc(lines, (cap = cap ? 2 * cap : 1024) * sizeof(*lines));

			if (!more)
				break;
			lines = more;
		}
		if (strncmp(line, "{\"ts_ns\":", 9) != 0 || !rest)
			rest = line;    /* not a line either writer makes: kept whole */
		lines[n++] = strdup(rest);
	}
	qsort(lines, n, sizeof(*lines), by_text);
	*count = n;
	return lines;
}

/* The recording at `path` as `asyncelt-dump --jsonl` shows it, against
 * the live JSON Lines of the same run. */
static void check_same_as_live(const char *path, const char *live_path)
{
	struct dump_file f;
	char *data, **dumped = NULL, **live = NULL;
	size_t ndumped = 0, nlive = 0, i, differ = 0;
	FILE *tmp = tmpfile(), *in = fopen(live_path, "r");

	if (tmp && in && read_recording(path, &f, &data)) {
		output_lines(tmp, &f, 1, true);
		rewind(tmp);
		dumped = timeless_lines(tmp, &ndumped);
		live = timeless_lines(in, &nlive);
		for (i = 0; i < ndumped && i < nlive; i++)
			if (strcmp(dumped[i], live[i]) && differ++ < 3)
				tap_diag("live   %s# dumped %s", live[i], dumped[i]);
		dump_file_free(&f);
		free(data);
	}
	ok(ndumped == nlive && nlive > 2 * ALL && !differ,
	   "asyncelt-dump --jsonl shows the %zu lines format=json wrote live (%zu), "
	   "but the times", ndumped, nlive);
	for (i = 0; i < ndumped; i++)
		free(dumped[i]);
	for (i = 0; i < nlive; i++)
		free(live[i]);
	free(dumped);
	free(live);
	if (tmp)
		fclose(tmp);
	if (in)
		fclose(in);
}

int main(void)
{
	const char *prefix = test_prefix("logging-binary");
	char spec[1024], path[300], tiny_path[300], live_path[300];
	pthread_t threads[THREADS];
	int t, forked = 0;
	long cut_child = 0;
	long child = 0;

	tap_plan(22);
	if (elt_register_function(WORK, "Work", "l(K i d)", ELT_FUNCTION_ASYNC) ||
	    elt_register_function(PLAIN, "Plain", "v(p)", 0) ||
	    elt_register_function(BIG, "Big", "v({c[200]})", 0) ||
	    elt_register_function(MEDIUM, "Medium", "v({c[80]})", 0) ||
	    elt_register_function(NOISE, "Noise", "v()", 0) ||
	    elt_register_function(ODD, "Odd", "v()", 0) ||
	    elt_register_function(ODD_ASYNC, "OddAsync", "v(K)", ELT_FUNCTION_ASYNC) ||
	    elt_register_function(MANY, "Many", MANY_SIGNATURE, 0))
		tap_bail("register: %s", elt_last_error());

	is_int(elt_plugin_load("logging:format=binary"), ELT_E_BAD_OPTION,
	       "format=binary without output= is refused");
	ok(strstr(elt_last_error(), "output=") != NULL, "... saying why: %s", elt_last_error());
	is_int(elt_plugin_load("logging:format=binary,buffer=127,output=/dev/null"),
	       ELT_E_BAD_OPTION, "format=binary with a 127-byte buffer is refused");
	ok(strstr(elt_last_error(), "buffer: at least 128 bytes") != NULL, "... saying why: %s",
	   elt_last_error());

	snprintf(spec, sizeof(spec), "logging:format=binary,output=%s-%%p.bin;"
		 "logging:format=binary,buffer=128,output=%s-tiny.bin;"
		 "logging:format=json,output=%s-live-%%p.jsonl", prefix, prefix, prefix);
	is_int(elt_plugin_load(spec), ELT_OK, "two binary instances and a JSON one load: %s",
	       elt_last_error());
	snprintf(path, sizeof(path), "%s-%ld.bin", prefix, (long)getpid());
	snprintf(tiny_path, sizeof(tiny_path), "%s-tiny.bin", prefix);
	snprintf(live_path, sizeof(live_path), "%s-live-%ld.jsonl", prefix, (long)getpid());

	for (t = 0; t < THREADS; t++)
		if (pthread_create(&threads[t], NULL, worker, (void *)(uintptr_t)t))
			tap_bail("pthread_create failed");
	for (t = 0; t < THREADS; t++)
		pthread_join(threads[t], NULL);
	value_call(BIG, BIG_SIZE);
	value_call(MEDIUM, MEDIUM_SIZE);
	odd_segments();
	register_long_functions();

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
		forked = pid > 0 && WIFEXITED(status) && WEXITSTATUS(status) == 0;
		child = (long)pid;
		/* a child that ends without shutting down: its call was
		 * still in its buffer, and its file says it was not closed */
		pid = fork();
		if (pid == 0) {
			elt_emit_enter(PLAIN, (void *[]){ &(void *){ NULL } }, NULL);
			elt_emit_leave(PLAIN, NULL, NULL);
			_exit(0);
		}
		if (pid > 0)
			waitpid(pid, &status, 0);
		cut_child = pid > 0 && WIFEXITED(status) && WEXITSTATUS(status) == 0 ? pid : 0;
	}
#endif
	is_int(elt_shutdown(), ELT_OK, "shutdown writes every buffer out");

	check_recording(path, "normal buffer");
	check_same_as_live(path, live_path);
	if (forked) {
		char child_path[300], *data;
		struct dump_file f;
		struct tally tl;

		snprintf(child_path, sizeof(child_path), "%s-%ld.bin", prefix, child);
		if (read_recording(child_path, &f, &data)) {
			tally_file(&f, &tl);
			ok(f.nevents == 2 && tl.kinds[REC_CALL] == 1 && tl.kinds[REC_RETURN] == 1 &&
			   f.closed && f.pid == child && f.nfunctions >= 2 && f.functions[1].defined &&
			   !strcmp(f.functions[1].name, "Plain"),
			   "the fork child's own file: its pid, the functions, its 2 records only");
			dump_file_free(&f);
		} else {
			ok(0, "the fork child's own file: readable");
		}
		free(data);
		unlink(child_path);
		/* the JSON instance's own file of the child */
		snprintf(child_path, sizeof(child_path), "%s-live-%ld.jsonl", prefix, child);
		unlink(child_path);
	} else {
		tap_skip(1, "no fork");
	}
	if (cut_child) {
		char child_path[300], *data;
		struct dump_file f;

		snprintf(child_path, sizeof(child_path), "%s-%ld.bin", prefix, cut_child);
		if (read_recording(child_path, &f, &data)) {
			ok(!f.closed && f.nevents == 0 && f.pid == cut_child,
			   "a child that ends with _exit: its file not closed, its buffered "
			   "records not in it");
			dump_file_free(&f);
		} else {
			ok(0, "the _exit child's own file: readable");
		}
		free(data);
		unlink(child_path);
		snprintf(child_path, sizeof(child_path), "%s-live-%ld.jsonl", prefix, cut_child);
		unlink(child_path);
	} else {
		tap_skip(1, "no fork");
	}
	{
		/* the 128-byte buffer: a write every few records, the function
		 * records longer than it each in one */
		struct dump_file f;
		struct tally tl;
		char *data;

		if (read_recording(tiny_path, &f, &data)) {
			tally_file(&f, &tl);
			ok(!f.truncated && tl.kinds[REC_CALL] == 2 * ALL &&
			   tl.threads_right == THREADS && tl.unordered == 0 &&
			   tl.work_args_ok == ALL && tl.ret_ok == ALL,
			   "128-byte buffer: every record whole, %lu calls", tl.kinds[REC_CALL]);
			ok(tl.big_incomplete == 1 && tl.big_value == 0 && tl.medium_value == 1 &&
			   f.buffer == 128,
			   "128-byte buffer: the 200-byte argument left out, its call marked "
			   "incomplete; the 80-byte one recorded whole; the preamble says 128");
			ok(long_functions_defined(&f) == LONG_FUNCTIONS,
			   "128-byte buffer: the %d functions with %d-byte names all defined",
			   LONG_FUNCTIONS, LONG_NAME);
			ok(tl.unregistered == 2 && tl.unbalanced == 1 && tl.orphan == 1 &&
			   tl.tailcall == 1,
			   "128-byte buffer: the odd segments each recorded as such");
			dump_file_free(&f);
		} else {
			ok(0, "128-byte buffer: readable");
			ok(0, "128-byte buffer: readable");
			ok(0, "128-byte buffer: readable");
			ok(0, "128-byte buffer: readable");
		}
		free(data);
	}
	if (forked && cut_child) {
		/* No %p in that name: the children wrote files of their own,
		 * the name and their pid, rather than records in their
		 * parent's that nothing could tell from its own. */
		char child_path[330], *data, *cut_data;
		struct dump_file f, cut;
		struct tally tl;
		bool read = false, read_cut = false;

		snprintf(child_path, sizeof(child_path), "%s.%ld", tiny_path, child);
		if ((read = read_recording(child_path, &f, &data)))
			tally_file(&f, &tl);
		unlink(child_path);
		snprintf(child_path, sizeof(child_path), "%s.%ld", tiny_path, cut_child);
		read_cut = read_recording(child_path, &cut, &cut_data);
		unlink(child_path);
		ok(read && read_cut && f.pid == child && f.closed && f.nevents == 2 &&
		   tl.kinds[REC_CALL] == 1 && f.nfunctions >= 2 && f.functions[1].defined &&
		   !strcmp(f.functions[1].name, "Plain") && cut.pid == cut_child && !cut.closed,
		   "without %%p, each fork child writes NAME.PID: its pid, the functions, "
		   "its records; the _exit one's not closed");
		if (read)
			dump_file_free(&f);
		if (read_cut)
			dump_file_free(&cut);
		free(data);
		free(cut_data);
	} else {
		tap_skip(1, "no fork");
	}
	unlink(path);
	unlink(tiny_path);
	unlink(live_path);
	return tap_done();
}
