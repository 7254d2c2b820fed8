/*
 * For the logging and timing tests: reading the files the plugins write,
 * counting what is in them, and handing them to tests/check-trace.py.
 */
#ifndef ELT_TESTS_PLUGIN_OUTPUT_H
#define ELT_TESTS_PLUGIN_OUTPUT_H

#include "tap.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The whole file, NUL-terminated (freed by the caller); "" when absent. */
static inline char *slurp(const char *path)
{
	FILE *f = fopen(path, "rb");
	size_t size = 0, cap = 4096, n;
	char *text = malloc(cap);

	if (!text)
		tap_bail("out of memory");
	while (f && (n = fread(text + size, 1, cap - size - 1, f)) > 0) {
		size += n;
		if (cap - size - 1 == 0 && !(text = realloc(text, cap *= 2)))
			tap_bail("out of memory");
	}
	if (f)
		fclose(f);
	text[size] = '\0';
	return text;
}

static inline unsigned long count_of(const char *text, const char *needle)
{
	unsigned long n = 0;

	for (; (text = strstr(text, needle)); text += strlen(needle))
		n++;
	return n;
}

/* Lines that hold both `a` and `b`. */
static inline unsigned long count_lines_with(const char *text, const char *a, const char *b)
{
	unsigned long n = 0;

	while (*text) {
		const char *end = strchr(text, '\n');
		size_t len = end ? (size_t)(end - text) : strlen(text);
		char line[4096];

		if (len < sizeof(line)) {
			memcpy(line, text, len);
			line[len] = '\0';
			n += strstr(line, a) && strstr(line, b);
		}
		text += len + (end != NULL);
	}
	return n;
}

/* A fresh prefix for one test's files: PREFIX.text, PREFIX.json, ...
 * (mkstemp, which every target has; the file itself is removed). */
static inline const char *test_prefix(const char *name)
{
	static char prefix[256];
	const char *tmp = getenv("TMPDIR");
	int fd;

	snprintf(prefix, sizeof(prefix), "%s/asyncelt-%s-XXXXXX", tmp && *tmp ? tmp : "/tmp",
		 name);
	fd = mkstemp(prefix);
	if (fd < 0)
		tap_bail("mkstemp %s failed", prefix);
	close(fd);
	unlink(prefix);
	return prefix;
}

/* Runs tests/check-trace.py MODE FILE as one TAP test; SKIP when python3
 * was not found by configure (or cannot be run from here). */
static inline void check_with_python(const char *mode, const char *path, const char *what)
{
	const char *python = getenv("PYTHON");
	const char *srcdir = getenv("top_srcdir");
	char command[2048];
	int status;

#if defined(_WIN32)
	/* A Windows program (under wine) cannot start the build host's
	 * python3; the native and Linux-target runs check these files. */
	tap_skip(1, "a Windows program cannot run the build host's python3 "
		 "(tests/check-trace.py)");
	return;
#endif
	if (!python || !*python || !srcdir) {
		tap_skip(1, "python3 not found by configure: cannot run tests/check-trace.py");
		return;
	}
	/* its report goes to the test's log, not into the TAP stream */
	snprintf(command, sizeof(command), "'%s' '%s/tests/check-trace.py' %s '%s' 1>&2",
		 python, srcdir, mode, path);
	fflush(stdout);
	status = system(command);
	ok(status == 0, "%s (check-trace.py %s)", what, mode);
}

#endif
