/*
 * What a fuzz harness is: tests/fuzz/fuzz-NAME.c defines
 *
 *     FUZZ_HARNESS(NAME)
 *     {
 *             ... feed data[0..size) to the code under test,
 *                 FUZZ_CHECK what must hold whatever the input ...
 *             return 0;
 *     }
 *
 * and keeps its seeds in tests/fuzz/corpus/NAME/ (NAME: a C identifier).
 * Built with -DELT_LIBFUZZER (tests/fuzz/run-fuzzers.sh, clang), the body
 * is libFuzzer's LLVMFuzzerTestOneInput; otherwise it registers itself with
 * tests/fuzz/replay.c, which `make check` runs to feed it every file of its
 * corpus, crash inputs found so far included, with any compiler.
 */
#ifndef ELT_TESTS_FUZZ_H
#define ELT_TESTS_FUZZ_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

typedef int (*fuzz_function)(const uint8_t *data, size_t size);

#if defined(ELT_LIBFUZZER)
# define FUZZ_HARNESS(name) \
	int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size); \
	int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
#else
void fuzz_register(const char *name, fuzz_function fn);
# define FUZZ_HARNESS(name) \
	static int fuzz_##name(const uint8_t *data, size_t size); \
	__attribute__((constructor)) static void fuzz_register_##name(void) \
	{ \
		fuzz_register(#name, fuzz_##name); \
	} \
	static int fuzz_##name(const uint8_t *data, size_t size)
#endif

/* A property that must hold for every input: when it does not, the input
 * is a crash (libFuzzer saves it; the replay names the file). */
#define FUZZ_CHECK(cond, ...) \
	do { \
		if (!(cond)) { \
			fprintf(stderr, "%s:%d: check failed: %s: ", __FILE__, __LINE__, #cond); \
			fprintf(stderr, __VA_ARGS__); \
			fputc('\n', stderr); \
			abort(); \
		} \
	} while (0)

/* The input as a NUL-terminated string (a copy, so that reading past
 * `size` is caught by ASan): NULL when it holds a NUL byte, which no C
 * string can carry.  Free it. */
static inline char *fuzz_string(const uint8_t *data, size_t size)
{
	char *s;
	size_t i;

	for (i = 0; i < size; i++)
		if (!data[i])
			return NULL;
	s = malloc(size + 1);
	if (!s)
		abort();
	for (i = 0; i < size; i++)
		s[i] = (char)data[i];
	s[size] = 0;
	return s;
}

#endif
