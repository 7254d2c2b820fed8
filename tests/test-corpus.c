/*
 * The decoding corpus, with the C compiler as the oracle.
 *
 * gen-corpus.py writes the cases (tests/corpus/corpus.h): for each
 * signature, known values passed to probe_enter and returned through
 * probe_leave by code the compiler laid out for that prototype.  This
 * program registers each signature, runs its case, and a test plugin
 * compares what the getters decode with the values passed, byte for
 * byte, padding excluded.  One TAP test point per signature.
 *
 *     test-corpus            every case
 *     test-corpus 17 301     only these cases (numbers from the TAP lines)
 */
#define ELT_PLUGIN_STATIC 1
#include "tap.h"
#include "corpus.h"

#include <asyncelt.h>
#include <asyncelt/plugin.h>

#include <float.h>
#include <stdint.h>
#include <stdlib.h>

#ifndef ELT_CORPUS_GENERATED
int main(void)
{
	tap_skip_all("python3 was not found at configure time: the corpus "
		     "generator (tests/corpus/gen-corpus.py) could not run");
}
#else

static const struct corpus_case *const parts[CORPUS_PARTS] = {
	corpus_cases_1, corpus_cases_2, corpus_cases_3,
	corpus_cases_4, corpus_cases_5, corpus_cases_6,
};

#define CASE_ID(c) ((elt_function_id)0x100000 + (c)->number)
#define DUMP_MAX 128

/* --- comparing values, padding excluded ----------------------------------- */

/* The case running, set by run_case. */
static const struct corpus_case *current;

/* The union members that value `index` of the current case initialises
 * (the result's at nargs), for same_value. */
static const unsigned char *initialised_unions(unsigned index)
{
	return current->unions ? current->unions[index] : NULL;
}

/* The bytes of a long double that hold its value: x87's 80-bit format
 * sits in 12 or 16 bytes, the rest is padding nobody writes. */
#if LDBL_MANT_DIG == 64
# define LONG_DOUBLE_BYTES 10u
#else
# define LONG_DOUBLE_BYTES ((uint32_t)sizeof(long double))
#endif

/* Compares the value bytes of a `t` at `want` and `got`, walking the type
 * to its leaves: struct members at their offsets, a union's initialised
 * member (the next index of *unions), array and complex elements, a
 * scalar's significant bytes.  Returns 1 when equal; otherwise 0 and
 * *where, the offset of the first byte that differs. */
static int same_value(const elt_type *t, const unsigned char *want,
		      const unsigned char *got, uint32_t base,
		      const unsigned char **unions, uint32_t *where)
{
	uint32_t i, n;

	switch (t->kind) {
	case ELT_TYPE_STRUCT:
		for (i = 0; i < t->count; i++)
			if (!same_value(t->members[i], want, got, base + t->offsets[i],
					unions, where))
				return 0;
		return 1;
	case ELT_TYPE_UNION:
		/* The other members' bytes are unspecified (C11 6.2.6.1p7):
		 * the caller may pass anything there, as GCC does for riscv64
		 * when a short member leaves a register half unset.  An empty
		 * union has no initialiser to name. */
		if (!t->count)
			return 1;
		if (!*unions || **unions >= t->count)
			tap_bail("case %u: no initialised member for a union at byte %u: "
				 "gen-corpus.py and the signature disagree",
				 current->number, (unsigned)base);
		i = *(*unions)++;
		return same_value(t->members[i], want, got, base + t->offsets[i], unions,
				  where);
	case ELT_TYPE_ARRAY:
	case ELT_TYPE_COMPLEX:
		for (i = 0; i < t->count; i++)
			if (!same_value(t->element, want, got, base + i * t->element->size,
					unions, where))
				return 0;
		return 1;
	default:
		n = t->kind == ELT_TYPE_LONGDOUBLE ? LONG_DOUBLE_BYTES : t->size;
		for (i = 0; i < n; i++) {
			if (want[base + i] != got[base + i]) {
				*where = base + i;
				return 0;
			}
		}
		return 1;
	}
}

/* --- what the plugin saw ---------------------------------------------------- */

enum problem {
	FINE,
	NOT_CALLED,             /* a callback did not run, or ran twice */
	WRONG_KIND,             /* the segment was misclassified */
	BAD_STATUS,             /* a getter failed */
	WRONG_COUNT,            /* not as many arguments as passed */
	WRONG_LENGTH,           /* a range of the wrong length */
	WRONG_BYTES,            /* a value decoded wrong */
	CLOBBERED,              /* the caller did not receive the result intact */
};

static struct outcome {
	unsigned enters, leaves;
	enum problem problem;
	const char *where;      /* "argument", "return value", ... */
	unsigned index;         /* which argument, from 1 */
	elt_status status;
	elt_segment_kind kind;
	size_t count, length, want_length;
	uint32_t at;            /* first differing byte */
	unsigned char want[DUMP_MAX], got[DUMP_MAX];
	char unsupported[200];  /* the getter's reason, when one said so */
	unsigned args_checked, returns_checked;
} seen;

/* Records the first problem of a case; 1 when this one is it. */
static int problem(enum problem what, const char *where, unsigned index)
{
	if (seen.problem != FINE)
		return 0;
	seen.problem = what;
	seen.where = where;
	seen.index = index;
	return 1;
}

/* Keeps the bytes of a value that differs, for the report. */
static void keep_bytes(const void *want, const void *got, uint32_t size, uint32_t at)
{
	size_t n = size < DUMP_MAX ? size : DUMP_MAX;

	seen.at = at;
	seen.length = size;
	memcpy(seen.want, want, n);
	memcpy(seen.got, got, n);
}

/* Keeps the reason of an ELT_E_UNSUPPORTED, without the "function 'NAME'
 * (SIGNATURE): " that starts it. */
static void note_unsupported(void)
{
	const char *msg = elt_last_error(), *sig = strstr(msg, current->signature);

	if (seen.unsupported[0])
		return;
	if (sig && strncmp(sig + strlen(current->signature), "): ", 3) == 0)
		msg = sig + strlen(current->signature) + 3;
	strncpy(seen.unsupported, msg, sizeof(seen.unsupported) - 1);
}

/* Compares one decoded value with the one passed. */
static void check_value(const elt_type *t, const void *want, const elt_range *r,
			const unsigned char *unions, const char *where, unsigned index)
{
	uint32_t at = 0;

	if (r->length != t->size) {
		if (problem(WRONG_LENGTH, where, index)) {
			seen.length = r->length;
			seen.want_length = t->size;
		}
		return;
	}
	if (t->size && !same_value(t, want, (const unsigned char *)r->start, 0, &unions,
				   &at) &&
	    problem(WRONG_BYTES, where, index))
		keep_bytes(want, (const void *)r->start, t->size, at);
}

static int ours(const elt_info *info)
{
	return current && elt_get_function_id(info) == CASE_ID(current);
}

static void corpus_enter(const elt_info *info, void *state)
{
	const elt_signature *sig;
	elt_range ranges[128];
	size_t n = 128;
	uint32_t i, arg;

	(void)state;
	if (!ours(info) || seen.enters++)
		return;
	seen.kind = elt_get_segment_kind(info);
	if (seen.kind != ELT_SEGMENT_CALL) {
		/* a misplaced K reads some other argument as the continuation */
		problem(WRONG_KIND, "Enter", 0);
		return;
	}
	seen.status = elt_get_enter_info(info, ranges, &n, NULL);
	if (seen.status == ELT_E_UNSUPPORTED) {
		note_unsupported();
		return;
	}
	if (seen.status != ELT_OK) {
		problem(BAD_STATUS, "elt_get_enter_info", 0);
		return;
	}
	if (n != current->nargs) {
		seen.count = n;
		problem(WRONG_COUNT, "arguments", 0);
		return;
	}
	sig = elt_get_function(info)->signature;
	for (i = 0, arg = 0; i < sig->nparams; i++) {
		if ((int32_t)i == sig->continuation_index)
			continue;
		check_value(sig->params[i], current->args[arg], &ranges[arg],
			    initialised_unions(arg), "argument", arg + 1);
		arg++;
		seen.args_checked++;
	}
}

static void corpus_leave(const elt_info *info, void *state)
{
	const elt_type *t;
	elt_range r;

	(void)state;
	if (!ours(info) || seen.leaves++)
		return;
	seen.kind = elt_get_segment_kind(info);
	if (seen.kind != ELT_SEGMENT_RETURN) {
		problem(WRONG_KIND, "Leave", 0);
		return;
	}
	seen.status = elt_get_return_info(info, &r);
	if (seen.status == ELT_E_UNSUPPORTED) {
		note_unsupported();
		return;
	}
	if (seen.status != ELT_OK) {
		problem(BAD_STATUS, "elt_get_return_info", 0);
		return;
	}
	t = elt_get_function(info)->signature->ret;
	if (!current->ret) {
		if ((r.start || r.length) && problem(WRONG_LENGTH, "return value", 0)) {
			seen.length = r.length;
			seen.want_length = 0;
		}
		return;
	}
	check_value(t, current->ret, &r, initialised_unions(current->nargs),
		    "return value", 0);
	seen.returns_checked++;
}

ELT_PLUGIN_DEFINE(corpus, .enter = corpus_enter, .leave = corpus_leave);

void corpus_received(const void *value)
{
	const elt_type *t = elt_find_function(CASE_ID(current))->signature->ret;
	const unsigned char *unions = initialised_unions(current->nargs);
	uint32_t at = 0;

	if (!same_value(t, current->ret, value, 0, &unions, &at) &&
	    problem(CLOBBERED, "received result", 0))
		keep_bytes(current->ret, value, t->size, at);
}

/* --- reporting ---------------------------------------------------------------- */

static void dump(const char *label, const unsigned char *bytes, size_t n)
{
	char line[3 * DUMP_MAX + 1];
	size_t i;

	if (n > DUMP_MAX)
		n = DUMP_MAX;
	for (i = 0; i < n; i++)
		snprintf(line + 3 * i, 4, " %02x", bytes[i]);
	line[3 * n] = '\0';
	tap_diag("  %s%s", label, line);
}

static void explain(void)
{
	char what[48];

	/* "argument 3", "return value" */
	if (seen.index)
		snprintf(what, sizeof(what), "%s %u", seen.where, seen.index);
	else
		snprintf(what, sizeof(what), "%s", seen.where);
	switch (seen.problem) {
	case FINE:
		break;
	case NOT_CALLED:
		tap_diag("  %u Enter and %u Leave callbacks, not one of each",
			 seen.enters, seen.leaves);
		break;
	case WRONG_KIND:
		tap_diag("  %s classified as %s", seen.where,
			 elt_segment_kind_name(seen.kind));
		break;
	case BAD_STATUS:
		tap_diag("  %s: %s", seen.where, elt_strerror(seen.status));
		break;
	case WRONG_COUNT:
		tap_diag("  %zu arguments decoded, %u passed", seen.count, current->nargs);
		break;
	case WRONG_LENGTH:
		tap_diag("  %s: range of %zu bytes, want %zu", what, seen.length,
			 seen.want_length);
		break;
	case WRONG_BYTES:
	case CLOBBERED:
		tap_diag("  %s (%zu bytes): first difference at byte %u", what, seen.length,
			 (unsigned)seen.at);
		dump("want:", seen.want, seen.length);
		dump("got: ", seen.got, seen.length);
		break;
	}
}

/* Runs one case; its TAP line.  Returns 1 when a getter said unsupported. */
static int run_case(const struct corpus_case *c, const char *abi)
{
	char name[32];
	elt_status st;

	snprintf(name, sizeof(name), "case %u", c->number);
	memset(&seen, 0, sizeof(seen));
	st = elt_register_function(CASE_ID(c), name, c->signature,
				   c->async ? ELT_FUNCTION_ASYNC : 0);
	if (st == ELT_E_UNSUPPORTED) {
		printf("ok %d - case %u: %s # SKIP unsupported on %s: %s\n", ++tap_run,
		       c->number, c->signature, abi, elt_last_error());
		return 1;
	}
	if (st != ELT_OK) {
		ok(0, "case %u: %s: registered", c->number, c->signature);
		tap_diag("  %s", elt_last_error());
		return 0;
	}
	current = c;
	probe_function = CASE_ID(c);
	probe_continuation = 0;
	c->run();
	current = NULL;
	if (seen.problem == FINE && (seen.enters != 1 || seen.leaves != 1))
		problem(NOT_CALLED, "callbacks", 0);
	if (seen.problem != FINE) {
		ok(0, "case %u: %s", c->number, c->signature);
		explain();
		if (seen.unsupported[0])
			tap_diag("  and unsupported: %s", seen.unsupported);
		return 0;
	}
	if (seen.unsupported[0]) {
		printf("ok %d - case %u: %s # SKIP unsupported on %s: %s\n", ++tap_run,
		       c->number, c->signature, abi, seen.unsupported);
		fflush(stdout);
		return 1;
	}
	ok(1, "case %u: %s", c->number, c->signature);
	return 0;
}

static int wanted(unsigned number, int argc, char **argv)
{
	int i;

	if (argc < 2)
		return 1;
	for (i = 1; i < argc; i++)
		if (strtoul(argv[i], NULL, 10) == number)
			return 1;
	return 0;
}

int main(int argc, char **argv)
{
	unsigned signatures = 0, args = 0, rets = 0, unsupported = 0, p;
	const char *abi = elt_abi_name();

	if (elt_plugin_add(&elt_plugin_corpus, NULL) != ELT_OK)
		tap_bail("cannot add the corpus plugin: %s", elt_last_error());
	tap_diag("ABI: %s; corpus seed %lu (tests/corpus/gen-corpus.py --seed %lu)",
		 abi, corpus_seed, corpus_seed);
	for (p = 0; p < CORPUS_PARTS; p++) {
		const struct corpus_case *c;

		for (c = parts[p]; c->signature; c++) {
			if (!wanted(c->number, argc, argv))
				continue;
			signatures++;
			unsupported += run_case(c, abi);
			args += seen.args_checked;
			rets += seen.returns_checked;
		}
	}
	elt_shutdown();
	tap_diag("corpus: %s: %u signatures, %u arguments and %u return values checked, "
		 "%u unsupported", abi, signatures, args, rets, unsupported);
	return tap_done();
}
#endif
