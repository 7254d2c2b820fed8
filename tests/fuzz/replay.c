/*
 * The fuzz harnesses without libFuzzer: feeds every file of
 * tests/fuzz/corpus/NAME/ (the seeds and every crash input committed since)
 * to harness NAME, one TAP point per harness.  A crash or a failed
 * FUZZ_CHECK names the file being replayed.
 *
 *     replay                     every harness, corpora under $top_srcdir
 *     replay NAME FILE...        one harness, these inputs (to debug one)
 */
#include "fuzz.h"
#include "../tap.h"

#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>

#define MAX_HARNESSES 16
#define MAX_INPUT_SIZE (1u << 20)    /* libFuzzer's -max_len is far smaller */
/* libFuzzer's -timeout in run-fuzzers.sh is 10 s; qemu is slower. */
#define INPUT_SECONDS 60

static struct {
	const char *name;
	fuzz_function fn;
} harnesses[MAX_HARNESSES];
static unsigned harness_count;

void fuzz_register(const char *name, fuzz_function fn)
{
	if (harness_count == MAX_HARNESSES) {
		fprintf(stderr, "replay: more than %u harnesses: raise MAX_HARNESSES\n",
			MAX_HARNESSES);
		abort();
	}
	harnesses[harness_count].name = name;
	harnesses[harness_count].fn = fn;
	harness_count++;
}

/* The input being replayed, for the crash message. */
static char current[4096];

static void say_current(int sig)
{
	static const char what[] = "\nreplay: crashed on ";

	if (write(2, what, sizeof(what) - 1) < 0 ||
	    write(2, current, strlen(current)) < 0 || write(2, "\n", 1) < 0)
		_exit(128 + sig);
	signal(sig, SIG_DFL);
	raise(sig);
}

/* Feeds one file to fn; 0 when the file cannot be read (said why). */
static int replay_file(fuzz_function fn, const char *path)
{
	static uint8_t data[MAX_INPUT_SIZE];
	FILE *f = fopen(path, "rb");
	size_t n;
	uint8_t *copy;

	if (!f) {
		tap_diag("cannot open %s: %s", path, strerror(errno));
		return 0;
	}
	n = fread(data, 1, sizeof(data), f);
	if (ferror(f) || !feof(f)) {
		tap_diag("cannot read %s, or longer than %u bytes", path, MAX_INPUT_SIZE);
		fclose(f);
		return 0;
	}
	fclose(f);
	/* A buffer of exactly the input's size, as libFuzzer gives: reading
	 * past it is caught by ASan. */
	copy = malloc(n ? n : 1);
	if (!copy)
		tap_bail("out of memory");
	memcpy(copy, data, n);
	snprintf(current, sizeof(current), "%s", path);
#ifdef SIGALRM
	alarm(INPUT_SECONDS);   /* a stall fails, and says where */
#endif
	fn(copy, n);
#ifdef SIGALRM
	alarm(0);
#endif
	free(copy);
	return 1;
}

static int by_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Replays every file of dir; returns how many, -1 on an error. */
static long replay_dir(fuzz_function fn, const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	char **names = NULL;
	size_t count = 0, i;
	long done = 0;

	if (!d) {
		tap_diag("cannot open the corpus %s: %s", dir, strerror(errno));
		return -1;
	}
	while ((e = readdir(d)) != NULL) {
		char **more;

		if (e->d_name[0] == '.')
			continue;
		more = realloc(names, (count + 1) * sizeof(*names));
		if (!more || !(more[count] = malloc(strlen(dir) + strlen(e->d_name) + 2)))
			tap_bail("out of memory");
		names = more;
		sprintf(names[count++], "%s/%s", dir, e->d_name);
	}
	closedir(d);
	/* sorted: a failure reproduces in the same order */
	qsort(names, count, sizeof(*names), by_name);
	for (i = 0; i < count; i++) {
		if (done >= 0 && !replay_file(fn, names[i]))
			done = -1;
		else if (done >= 0)
			done++;
		free(names[i]);
	}
	free(names);
	return done;
}

static fuzz_function find(const char *name)
{
	unsigned i;

	for (i = 0; i < harness_count; i++)
		if (strcmp(harnesses[i].name, name) == 0)
			return harnesses[i].fn;
	return NULL;
}

int main(int argc, char **argv)
{
	const char *top = getenv("top_srcdir");
	char dir[4096];
	unsigned i;

	signal(SIGSEGV, say_current);
	signal(SIGABRT, say_current);
#ifdef SIGBUS
	signal(SIGBUS, say_current);
#endif
#ifdef SIGALRM
	signal(SIGALRM, say_current);
#endif
	if (argc > 1) {
		fuzz_function fn = find(argv[1]);
		int a;

		if (!fn)
			tap_bail("no harness named \"%s\"", argv[1]);
		tap_plan(argc - 2);
		for (a = 2; a < argc; a++)
			ok(replay_file(fn, argv[a]), "%s: %s", argv[1], argv[a]);
		return tap_done();
	}
	if (harness_count == 0)
		tap_bail("no harness linked in");
	tap_plan((int)harness_count);
	for (i = 0; i < harness_count; i++) {
		long n;

		snprintf(dir, sizeof(dir), "%s/tests/fuzz/corpus/%s", top ? top : ".",
			 harnesses[i].name);
		n = replay_dir(harnesses[i].fn, dir);
		ok(n > 0, "%s: %ld inputs of %s replayed", harnesses[i].name, n, dir);
	}
	return tap_done();
}
