/*
 * A small TAP producer for the test programs (read by Automake's
 * tap-driver.sh).  Header-only; each test program includes it once.
 */
#ifndef ELT_TESTS_TAP_H
#define ELT_TESTS_TAP_H

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if defined(_WIN32)
# include <fcntl.h>
# include <io.h>
/* TAP lines end in "\n": a text-mode stdout would make it "\r\n", and
 * tap-driver.sh would not recognize "1..N\r" as the plan. */
__attribute__((constructor)) static void tap_binary_stdout(void)
{
	_setmode(_fileno(stdout), _O_BINARY);
}
#endif

static int tap_planned;
static int tap_run;
static int tap_failed;

static inline void tap_plan(int n)
{
	tap_planned = n;
	printf("1..%d\n", n);
	fflush(stdout);
}

/* A whole program that cannot run here: "1..0 # SKIP why". */
static inline void tap_skip_all(const char *why)
{
	printf("1..0 # SKIP %s\n", why);
	fflush(stdout);
	exit(0);
}

static inline void tap_bail(const char *fmt, ...)
{
	va_list ap;
	printf("Bail out! ");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
	exit(1);
}

static inline void tap_diag(const char *fmt, ...)
{
	va_list ap;
	printf("# ");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
}

static inline int tap_vok(int pass, const char *fmt, va_list ap)
{
	tap_run++;
	if (!pass)
		tap_failed++;
	printf("%s %d - ", pass ? "ok" : "not ok", tap_run);
	vprintf(fmt, ap);
	printf("\n");
	fflush(stdout);
	return pass;
}

static inline int tap_ok(int pass, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	tap_vok(pass, fmt, ap);
	va_end(ap);
	return pass;
}

#define ok(cond, ...) tap_ok(!!(cond), __VA_ARGS__)

/* Compares two integers and shows both when they differ. */
#define is_int(got, want, ...)                                             \
	do {                                                               \
		long long got_ = (long long)(got), want_ = (long long)(want); \
		if (!tap_ok(got_ == want_, __VA_ARGS__))                   \
			tap_diag("  got %lld, want %lld (%s)", got_, want_, #got); \
	} while (0)

#define is_str(got, want, ...)                                             \
	do {                                                               \
		const char *got_ = (got), *want_ = (want);                 \
		int same_ = got_ && want_ ? strcmp(got_, want_) == 0 : got_ == want_; \
		if (!tap_ok(same_, __VA_ARGS__))                           \
			tap_diag("  got \"%s\", want \"%s\"", got_ ? got_ : "(null)", \
				 want_ ? want_ : "(null)");                \
	} while (0)

/* Skips `n` planned tests, saying why. */
static inline void tap_skip(int n, const char *why)
{
	while (n-- > 0) {
		tap_run++;
		printf("ok %d # SKIP %s\n", tap_run, why);
	}
	fflush(stdout);
}

/* Ends the program: status 1 when a test failed or the plan was missed. */
static inline int tap_done(void)
{
	if (tap_planned == 0)
		printf("1..%d\n", tap_run);
	else if (tap_run != tap_planned)
		tap_diag("planned %d tests but ran %d", tap_planned, tap_run);
	fflush(stdout);
	return tap_failed || (tap_planned && tap_run != tap_planned);
}

#endif
