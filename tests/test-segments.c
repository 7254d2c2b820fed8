/*
 * Segments through the real helpers, as instrumented code makes them:
 *  - the classification of every kind and the DATAINCOMPLETE contract;
 *  - arguments and return values, with the C compiler as the oracle: it
 *    places the arguments (calls through function pointers of each
 *    prototype) and produces the results (functions returning each type);
 *  - unknown ids, the insufficient-buffer protocol, the recursion guard,
 *    unwinding through a helper.
 */
#define ELT_PLUGIN_STATIC 1     /* several plugins in one program */
#include "tap.h"
#include "probes.h"

#include <asyncelt.h>
#include <asyncelt/plugin.h>

#include <stdint.h>
#if defined(_WIN32)
/* No execinfo.h: the Win32 equivalent walks the SEH unwind data. */
# include <windows.h>
# define backtrace(pcs, n) ((int)RtlCaptureStackBackTrace(0, (n), (pcs), NULL))
#else
# include <execinfo.h>
#endif

/* --- the test plugin: records what a callback sees ----------------------- */

#define MAX_ARGS 32

static struct seen {
	unsigned calls;
	elt_segment_kind kind;
	elt_function_id id;
	const elt_function_desc *fn;
	void *data;
	void *continuation;
	elt_status continuation_st;
	elt_frame_info frame, tail;
	elt_status enter_st, return_st, tailcall_st;
	size_t nargs, total;
	elt_range ranges[MAX_ARGS];
	unsigned char args[MAX_ARGS][32];       /* ranges are valid only in the callback */
	elt_range ret;
	unsigned char ret_bytes[64];
	int backtrace_through_helper;
	int backtrace_reaches_caller;
	int intact_after_nested;        /* the info, after instrumented code ran */
} seen;

static int recurse, unwind;
static const elt_function_id NESTED_ID = 0x4444;

/* The header's getters are reads of the info's head; the library's
 * functions of the same names must agree with them in every segment. */
static struct { unsigned checked, disagreed; } inline_getters;

static void compare_inline_getters(const elt_info *info)
{
	inline_getters.checked++;
	if (elt_get_segment_kind(info) != (elt_get_segment_kind)(info) ||
	    elt_get_function_id(info) != (elt_get_function_id)(info) ||
	    elt_get_function(info) != (elt_get_function)(info))
		inline_getters.disagreed++;
}

static void record(const elt_info *info)
{
	size_t i;

	compare_inline_getters(info);
	seen.calls++;
	seen.kind = elt_get_segment_kind(info);
	seen.id = elt_get_function_id(info);
	seen.fn = elt_get_function(info);
	seen.data = elt_get_function_data(info);
	seen.continuation_st = elt_get_continuation(info, &seen.continuation);
	elt_get_frame_info(info, &seen.frame);

	seen.nargs = MAX_ARGS;
	seen.enter_st = elt_get_enter_info(info, seen.ranges, &seen.nargs, &seen.total);
	for (i = 0; seen.enter_st == ELT_OK && i < seen.nargs; i++)
		memcpy(seen.args[i], (const void *)seen.ranges[i].start,
		       seen.ranges[i].length < 32 ? seen.ranges[i].length : 32);
	seen.return_st = elt_get_return_info(info, &seen.ret);
	if (seen.return_st == ELT_OK && seen.ret.length)
		memcpy(seen.ret_bytes, (const void *)seen.ret.start,
		       seen.ret.length < 64 ? seen.ret.length : 64);
	memset(&seen.tail, 0, sizeof(seen.tail));
	seen.tailcall_st = elt_get_tailcall_info(info, &seen.tail);
	if (recurse) {
		/* Instrumented code, called by a plugin, for another function:
		 * its segment is not reported, nor does it touch this one's
		 * info (the thread's own, dispatch.c). */
		uintptr_t outer = probe_function;
		elt_frame_info again;

		probe_function = NESTED_ID;
		probe_enter();
		probe_function = outer;
		elt_get_frame_info(info, &again);
		seen.intact_after_nested =
			elt_get_segment_kind(info) == seen.kind && elt_get_function_id(info) == seen.id &&
			elt_get_function(info) == seen.fn && again.caller_sp == seen.frame.caller_sp &&
			again.return_address == seen.frame.return_address;
	}
	if (unwind) {
		void *pcs[32];
		int n = backtrace(pcs, 32);

		for (i = 0; i < (size_t)n; i++) {
			if ((uintptr_t)pcs[i] > (uintptr_t)probe_enter &&
			    (uintptr_t)pcs[i] <= (uintptr_t)probe_enter_end)
				seen.backtrace_through_helper = 1;
			/* and on, through the probe, into the C that called it
			 * (bit 0: the Thumb state bit, which unwinders drop) */
			if (((uintptr_t)pcs[i] | 1) == (probe_return_address | 1))
				seen.backtrace_reaches_caller = 1;
		}
	}
}

static void *tester_function_added(void *state, const elt_function_desc *fn)
{
	(void)state;
	return (void *)(uintptr_t)(fn->index + 1000);
}

static void tester_cb(const elt_info *info, void *state)
{
	(void)state;
	record(info);
}

ELT_PLUGIN_DEFINE(tester, .enter = tester_cb, .leave = tester_cb,
		  .tailcall = tester_cb, .function_added = tester_function_added);

/* Registers a test's function; a refusal would make its checks read some
 * other signature, so it ends the program. */
static void must_register(elt_function_id id, const char *name, const char *sig,
			  unsigned flags)
{
	if (elt_register_function(id, name, sig, flags) != ELT_OK)
		tap_bail("registering %s (%s): %s", name, sig, elt_last_error());
}

/* --- classification ------------------------------------------------------ */

static const elt_function_id ASYNC_ID = 0x1000, PLAIN_ID = 0x2000,
	UNSIGNED_ID = 0x3000, LATE_K_ID = 0x3100, UNKNOWN_ID = 0x9999;

static int64_t result_int64(void)
{
	return 0x0123456789abcdefll;
}

/* Enter of "l(K i)" with this continuation argument. */
static void enter(elt_function_id id, void *k)
{
	probe_function = id;
	PROBE_AS(void (*)(void *, int32_t), probe_enter)(k, 42);
}

/* Leave returning result_int64() with this continuation returned. */
static int64_t leave(elt_function_id id, void *k)
{
	probe_function = id;
	probe_target = (void (*)(void))result_int64;
	probe_continuation = (uintptr_t)k;
	return PROBE_AS(int64_t (*)(void), probe_leave)();
}

static void test_classification(void)
{
	enter(ASYNC_ID, NULL);
	is_int(seen.kind, ELT_SEGMENT_CALL, "Enter, NULL continuation: call");
	is_int(seen.enter_st, ELT_OK, "call: enter info available");
	is_int(seen.nargs, 1, "call: one argument (K is not reported)");
	is_int(*(int32_t *)seen.args[0], 42, "call: the int32 argument");
	ok(seen.continuation == NULL && seen.continuation_st == ELT_OK,
	   "call: continuation NULL");
	is_int(seen.return_st, ELT_E_WRONG_CALLBACK, "call: no return info in an Enter");
	is_int(seen.tailcall_st, ELT_E_WRONG_CALLBACK, "call: no tailcall info in an Enter");
	ok(seen.frame.function_id == ASYNC_ID && seen.frame.caller_sp == probe_caller_sp &&
	   seen.frame.return_address == probe_return_address,
	   "call: frame info (id, caller SP, return address)");
	ok(seen.fn && strcmp(seen.fn->name, "AsyncWork") == 0, "call: the function's name");
	ok(seen.fn && seen.data == (void *)(uintptr_t)(seen.fn->index + 1000),
	   "call: the plugin's function data");

	enter(ASYNC_ID, (void *)0xc0ffee);
	is_int(seen.kind, ELT_SEGMENT_RESUME, "Enter, continuation set: resume");
	is_int(seen.enter_st, ELT_E_DATAINCOMPLETE, "resume: arguments DATAINCOMPLETE");
	is_int(seen.nargs, 0, "resume: no ranges");
	ok(seen.continuation == (void *)0xc0ffee, "resume: the continuation argument");
	ok(seen.frame.caller_sp == probe_caller_sp, "resume: frame info still given");

	ok(leave(ASYNC_ID, (void *)0xbeef0) == result_int64(),
	   "suspend: the caller still receives its registers");
	is_int(seen.kind, ELT_SEGMENT_SUSPEND, "Leave, continuation returned: suspend");
	is_int(seen.return_st, ELT_E_DATAINCOMPLETE, "suspend: return DATAINCOMPLETE");
	ok(seen.ret.start == 0 && seen.ret.length == 0, "suspend: no return range");
	ok(seen.continuation == (void *)0xbeef0, "suspend: the continuation returned");
	is_int(seen.enter_st, ELT_E_WRONG_CALLBACK, "suspend: no enter info in a Leave");

	leave(ASYNC_ID, NULL);
	is_int(seen.kind, ELT_SEGMENT_RETURN, "Leave, no continuation: final return");
	is_int(seen.return_st, ELT_OK, "return: value available");
	ok(seen.ret.length == 8 && *(int64_t *)seen.ret_bytes == result_int64(),
	   "return: the int64 result");

	probe_function = ASYNC_ID;
	PROBE_AS(void (*)(void *, int32_t), probe_tailcall)((void *)0x1234, 7);
	is_int(seen.kind, ELT_SEGMENT_TAILCALL, "Tailcall: tailcall");
	is_int(seen.tailcall_st, ELT_OK, "tailcall: frame info available");
	is_int(seen.enter_st, ELT_E_WRONG_CALLBACK, "tailcall: no enter info");
	is_int(seen.return_st, ELT_E_WRONG_CALLBACK, "tailcall: no return info");

	/* not async: the continuation registers mean nothing */
	enter(PLAIN_ID, (void *)0xc0ffee);
	is_int(seen.kind, ELT_SEGMENT_CALL, "non-async Enter, first argument set: still a call");
	ok(seen.continuation == NULL, "non-async: no continuation");
	leave(PLAIN_ID, (void *)0xbeef0);
	is_int(seen.kind, ELT_SEGMENT_RETURN, "non-async Leave, continuation register set: "
	       "still a return");
	ok(seen.return_st == ELT_OK && *(int64_t *)seen.ret_bytes == result_int64(),
	   "non-async: its result");

	/* never registered */
	enter(UNKNOWN_ID, (void *)0xc0ffee);
	ok(seen.kind == ELT_SEGMENT_CALL && seen.fn == NULL && seen.data == NULL,
	   "unknown id: dispatched as a call, no function");
	is_int(seen.enter_st, ELT_E_UNKNOWN_FUNCTION, "unknown id: enter info says so");
	is_int(seen.continuation_st, ELT_E_UNKNOWN_FUNCTION, "unknown id: continuation says so");
	is_int(seen.frame.function_id, UNKNOWN_ID, "unknown id: frame info still given");
	leave(UNKNOWN_ID, (void *)0xbeef0);
	ok(seen.kind == ELT_SEGMENT_RETURN && seen.return_st == ELT_E_UNKNOWN_FUNCTION,
	   "unknown id: Leave is a return, return info says unknown");

	enter(UNSIGNED_ID, NULL);
	is_int(seen.enter_st, ELT_E_NO_SIGNATURE, "registered without a signature: says so");

	/* K after nine ints: past the registers of most ABIs */
	probe_function = LATE_K_ID;
	PROBE_AS(void (*)(int, int, int, int, int, int, int, int, int, void *, int),
		 probe_enter)(1, 2, 3, 4, 5, 6, 7, 8, 9, NULL, 10);
	ok(seen.kind == ELT_SEGMENT_CALL && seen.enter_st == ELT_OK && seen.nargs == 10 &&
	   *(int32_t *)seen.args[9] == 10, "K after nine ints, NULL: a call, ten arguments");
	PROBE_AS(void (*)(int, int, int, int, int, int, int, int, int, void *, int),
		 probe_enter)(1, 2, 3, 4, 5, 6, 7, 8, 9, (void *)0xfade, 10);
	ok(seen.kind == ELT_SEGMENT_RESUME && seen.continuation == (void *)0xfade,
	   "K after nine ints, set: a resume with that continuation");
}

/* The insufficient-buffer protocol, inside a callback. */
static elt_status protocol_st[3];
static size_t protocol_count[3];
static void protocol_cb(const elt_info *info, void *state)
{
	elt_range r[3];

	(void)state;
	if (elt_get_segment_kind(info) != ELT_SEGMENT_CALL || elt_get_function_id(info) != PLAIN_ID)
		return;
	protocol_count[0] = 0;
	protocol_st[0] = elt_get_enter_info(info, NULL, &protocol_count[0], NULL);
	protocol_count[1] = 1;
	protocol_st[1] = elt_get_enter_info(info, r, &protocol_count[1], NULL);
	protocol_count[2] = 2;
	protocol_st[2] = elt_get_enter_info(info, r, &protocol_count[2], NULL);
}
ELT_PLUGIN_DEFINE(protocol, .enter = protocol_cb);

static void test_buffer_protocol(void)
{
	enter(PLAIN_ID, (void *)0x10);
	ok(protocol_st[0] == ELT_E_INSUFFICIENT_BUFFER && protocol_count[0] == 2,
	   "count 0: insufficient buffer, 2 needed");
	ok(protocol_st[1] == ELT_E_INSUFFICIENT_BUFFER && protocol_count[1] == 2,
	   "count 1: insufficient buffer, 2 needed");
	ok(protocol_st[2] == ELT_OK && protocol_count[2] == 2, "count 2: filled");
}

/* --- arguments ------------------------------------------------------------ */

#define ARG_IS(i, type, want)                                                  \
	do {                                                                   \
		type got_;                                                     \
		memcpy(&got_, seen.args[i], sizeof(got_));                     \
		ok(seen.ranges[i].length == sizeof(type) && got_ == (want),    \
		   "argument %d: %s", (i) + 1, #type " " #want);               \
	} while (0)

static void test_arguments(void)
{
	elt_function_id id = 0x4000;
	long double ld;
	_Complex long double cld;
	_Complex float cf;
	_Complex double cd;

	/* 10 integers and 10 floating-point values: both kinds of register
	 * run out and the rest goes on the stack, interleaved. */
	must_register(id, "Scalars", "v(b B h H i I l L p z d f d f d f d f d f c)", 0);
	probe_function = id;
	PROBE_AS(void (*)(int8_t, uint8_t, int16_t, uint16_t, int32_t, uint32_t, int64_t,
			  uint64_t, void *, _Bool, double, float, double, float, double,
			  float, double, float, double, float, char), probe_enter)(
		-5, 250, -3000, 65000, -2000000000, 4000000000u, -9000000000000000000ll,
		18000000000000000000ull, (void *)&seen, 1, 1.5, 2.5f, 3.5, 4.5f, 5.5,
		6.5f, 7.5, 8.5f, 9.5, 10.5f, 'x');
	is_int(seen.enter_st, ELT_OK, "21 scalar arguments: decoded");
	is_int(seen.nargs, 21, "21 ranges");
	ARG_IS(0, int8_t, -5);
	ARG_IS(1, uint8_t, 250);
	ARG_IS(2, int16_t, -3000);
	ARG_IS(3, uint16_t, 65000);
	ARG_IS(4, int32_t, -2000000000);
	ARG_IS(5, uint32_t, 4000000000u);
	ARG_IS(6, int64_t, -9000000000000000000ll);
	ARG_IS(7, uint64_t, 18000000000000000000ull);
	ARG_IS(8, void *, (void *)&seen);
	ARG_IS(9, _Bool, 1);
	ARG_IS(10, double, 1.5);
	ARG_IS(11, float, 2.5f);
	ARG_IS(12, double, 3.5);
	ARG_IS(13, float, 4.5f);
	ARG_IS(14, double, 5.5);
	ARG_IS(15, float, 6.5f);
	ARG_IS(16, double, 7.5);
	ARG_IS(17, float, 8.5f);
	ARG_IS(18, double, 9.5);
	ARG_IS(19, float, 10.5f);
	ARG_IS(20, char, 'x');
	is_int(seen.total, 1 + 1 + 2 + 2 + 4 + 4 + 8 + 8 + sizeof(void *) + 1 + 5 * 8 +
	       5 * 4 + 1, "total size of the arguments");

#ifdef __SIZEOF_INT128__
	must_register(++id, "Int128", "v(i q i q)", 0);
	probe_function = id;
	PROBE_AS(void (*)(int32_t, __int128, int32_t, __int128), probe_enter)(
		1, ((__int128)0x1234 << 64) | 0x5678, 2, -((__int128)3 << 100));
	is_int(seen.enter_st, ELT_OK, "__int128 arguments: decoded");
	ARG_IS(1, __int128, ((__int128)0x1234 << 64) | 0x5678);
	ARG_IS(2, int32_t, 2);
	ARG_IS(3, __int128, -((__int128)3 << 100));
#else
	tap_skip(4, "no __int128 on this ABI");
#endif

	/* where registers run out: padding and alignment on the stack, a
	 * value that does not fit the registers left while a later one does */
#ifdef __SIZEOF_INT128__
	must_register(++id, "Int128Late", "v(i i i i i q i)", 0);
	probe_function = id;
	PROBE_AS(void (*)(int, int, int, int, int, __int128, int), probe_enter)(
		1, 2, 3, 4, 5, ((__int128)7 << 70) | 9, 6);
	ok(seen.enter_st == ELT_OK && seen.nargs == 7, "__int128 after five ints: decoded");
	ARG_IS(5, __int128, ((__int128)7 << 70) | 9);
	ARG_IS(6, int32_t, 6);
#else
	tap_skip(3, "no __int128 on this ABI");
#endif
	must_register(++id, "LongDoubleLate", "v(i i i i i i i D i)", 0);
	probe_function = id;
	PROBE_AS(void (*)(int, int, int, int, int, int, int, long double, int), probe_enter)(
		1, 2, 3, 4, 5, 6, 7, -2.5L, 8);
	memcpy(&ld, seen.args[7], sizeof(ld));
	ok(seen.enter_st == ELT_OK && ld == -2.5L, "long double after seven ints");
	ARG_IS(6, int32_t, 7);
	ARG_IS(8, int32_t, 8);
	must_register(++id, "ComplexLate", "v(d d d d d d d Cd d)", 0);
	probe_function = id;
	PROBE_AS(void (*)(double, double, double, double, double, double, double,
			  _Complex double, double), probe_enter)(
		1, 2, 3, 4, 5, 6, 7, 8.0 + 9.0i, 10);
	memcpy(&cd, seen.args[7], sizeof(cd));
	ok(seen.enter_st == ELT_OK && cd == 8.0 + 9.0i, "complex double after seven doubles");
	ARG_IS(6, double, 7);
	ARG_IS(8, double, 10);

	must_register(++id, "LongDouble", "v(D i CD Cf Cd)", 0);
	probe_function = id;
	PROBE_AS(void (*)(long double, int, _Complex long double, _Complex float,
			  _Complex double), probe_enter)(
		3.25L, 7, 1.0L + 2.0Li, 3.0f + 4.0fi, 5.0 + 6.0i);
	is_int(seen.enter_st, ELT_OK, "long double and complex arguments: decoded");
	memcpy(&ld, seen.args[0], sizeof(ld));
	ok(seen.ranges[0].length == sizeof(ld) && ld == 3.25L, "long double");
	ARG_IS(1, int32_t, 7);
	memcpy(&cld, seen.args[2], sizeof(cld));
	ok(seen.ranges[2].length == sizeof(cld) && cld == 1.0L + 2.0Li, "complex long double");
	memcpy(&cf, seen.args[3], sizeof(cf));
	ok(seen.ranges[3].length == sizeof(cf) && cf == 3.0f + 4.0fi, "complex float");
	memcpy(&cd, seen.args[4], sizeof(cd));
	ok(seen.ranges[4].length == sizeof(cd) && cd == 5.0 + 6.0i, "complex double");
}

/* Where the registers run out or a value is split, and variadic calls:
 * where ABIs differ most.  riscv64: an FP argument that finds no FP
 * register takes an integer one; a 16-byte value may be split between the
 * last integer register and the stack; a complex value that finds one FP
 * register goes in integer ones; variadic arguments follow the integer
 * convention, 16-aligned ones in an even-odd pair.  A port that does not
 * decode variadic calls says so (ELT_E_UNSUPPORTED): those are skipped. */
typedef _Complex float complex_float;
typedef _Complex double complex_double;

static int variadic_decoded(int n, const char *what)
{
	if (seen.enter_st == ELT_E_UNSUPPORTED) {
		tap_skip(n, "variadic calls are not decoded on this ABI");
		return 0;
	}
	is_int(seen.enter_st, ELT_OK, "%s: decoded", what);
	return 1;
}

static void test_edges(void)
{
	elt_function_id id = 0x6000;

	must_register(++id, "FpOverflow", "v(d d d d d d d d d f i)", 0);
	probe_function = id;
	PROBE_AS(void (*)(double, double, double, double, double, double, double, double,
			  double, float, int32_t), probe_enter)(
		1, 2, 3, 4, 5, 6, 7, 8, 9.5, 10.5f, 11);
	is_int(seen.enter_st, ELT_OK, "9 doubles, a float, an int32: decoded");
	ARG_IS(7, double, 8.0);
	ARG_IS(8, double, 9.5);
	ARG_IS(9, float, 10.5f);
	ARG_IS(10, int32_t, 11);

	must_register(++id, "SplitLongDouble", "v(l l l l l l l D i)", 0);
	probe_function = id;
	PROBE_AS(void (*)(int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t,
			  long double, int32_t), probe_enter)(1, 2, 3, 4, 5, 6, 7, 3.25L, 9);
	is_int(seen.enter_st, ELT_OK, "7 int64, a long double, an int32: decoded");
	ARG_IS(7, long double, 3.25L);
	ARG_IS(8, int32_t, 9);

#ifdef __SIZEOF_INT128__
	must_register(++id, "SplitInt128", "v(l l l l l l l q i)", 0);
	probe_function = id;
	PROBE_AS(void (*)(int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t,
			  __int128, int32_t), probe_enter)(
		1, 2, 3, 4, 5, 6, 7, ((__int128)0xaaaa << 64) | 0xbbbb, 9);
	is_int(seen.enter_st, ELT_OK, "7 int64, an __int128, an int32: decoded");
	ARG_IS(7, __int128, ((__int128)0xaaaa << 64) | 0xbbbb);
	ARG_IS(8, int32_t, 9);
#else
	tap_skip(3, "no __int128 on this ABI");
#endif

	must_register(++id, "ComplexLeftovers", "v(d d d d d d d Cf Cd d)", 0);
	probe_function = id;
	PROBE_AS(void (*)(double, double, double, double, double, double, double,
			  complex_float, complex_double, double), probe_enter)(
		1, 2, 3, 4, 5, 6, 7, 3.0f + 4.0fi, 5.0 + 6.0i, 8.5);
	is_int(seen.enter_st, ELT_OK, "7 doubles, complex float, complex double, double: "
	       "decoded");
	ARG_IS(7, complex_float, 3.0f + 4.0fi);
	ARG_IS(8, complex_double, 5.0 + 6.0i);
	ARG_IS(9, double, 8.5);

	must_register(++id, "SplitComplex", "v(l l l l l l l d d d d d d d d Cd i)", 0);
	probe_function = id;
	PROBE_AS(void (*)(int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t,
			  double, double, double, double, double, double, double, double,
			  complex_double, int32_t), probe_enter)(
		1, 2, 3, 4, 5, 6, 7, 1, 2, 3, 4, 5, 6, 7, 8, 5.0 + 6.0i, 9);
	is_int(seen.enter_st, ELT_OK, "7 int64, 8 doubles, complex double, int32: decoded");
	ARG_IS(15, complex_double, 5.0 + 6.0i);
	ARG_IS(16, int32_t, 9);

	must_register(++id, "Variadic", "v(i ... d D Cf Cd i)", 0);
	probe_function = id;
	PROBE_AS(void (*)(int32_t, ...), probe_enter)(
		1, 2.5, 3.25L, 3.0f + 4.0fi, 5.0 + 6.0i, 7);
	if (variadic_decoded(6, "variadic double, long double, complex, int32")) {
		ARG_IS(1, double, 2.5);
		ARG_IS(2, long double, 3.25L);
		ARG_IS(3, complex_float, 3.0f + 4.0fi);
		ARG_IS(4, complex_double, 5.0 + 6.0i);
		ARG_IS(5, int32_t, 7);
	}

	must_register(++id, "VariadicPair", "v(i ... D i)", 0);
	probe_function = id;
	PROBE_AS(void (*)(int32_t, ...), probe_enter)(1, 3.25L, 7);
	if (variadic_decoded(3, "variadic long double after one int32")) {
		ARG_IS(1, long double, 3.25L);
		ARG_IS(2, int32_t, 7);
	}

	must_register(++id, "VariadicLast", "v(l l l l l l l ... D i)", 0);
	probe_function = id;
	PROBE_AS(void (*)(int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t,
			  ...), probe_enter)(1, 2, 3, 4, 5, 6, 7, 3.25L, 9);
	if (variadic_decoded(3, "variadic long double after 7 int64")) {
		ARG_IS(7, long double, 3.25L);
		ARG_IS(8, int32_t, 9);
	}
}

/* Registers that run out in the middle of a value, values that follow on
 * the stack, and variadic calls: the compiler places them, the port must
 * find them (on ppc64le a long double or complex value can start in f13
 * and end on the stack, an __int128 in r10; every FP value also uses up a
 * GPR slot). */
#define LD_IS(i, want)                                                         \
	do {                                                                   \
		long double got_;                                              \
		memcpy(&got_, seen.args[i], sizeof(got_));                     \
		ok(seen.ranges[i].length == sizeof(got_) && got_ == (want),    \
		   "argument %d: long double " #want, (i) + 1);                \
	} while (0)
typedef double d_;

static void test_exhaustion(void)
{
	elt_function_id id = 0x4800;

	must_register(++id, "SplitLongDouble", "v(d d d d d d d d d d d d D i)", 0);
	probe_function = id;
	PROBE_AS(void (*)(d_, d_, d_, d_, d_, d_, d_, d_, d_, d_, d_, d_, long double, int),
		 probe_enter)(1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 1.0L / 3, 99);
	is_int(seen.enter_st, ELT_OK, "12 doubles, long double, int: decoded");
	ARG_IS(11, double, 12.0);
	LD_IS(12, 1.0L / 3);
	ARG_IS(13, int32_t, 99);

	must_register(++id, "SplitComplex", "v(d d d d d d d d d d d d Cd f)", 0);
	probe_function = id;
	PROBE_AS(void (*)(d_, d_, d_, d_, d_, d_, d_, d_, d_, d_, d_, d_, _Complex double,
			  float), probe_enter)(1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12,
					       1.5 + 2.5i, 7.5f);
	ARG_IS(12, _Complex double, 1.5 + 2.5i);
	ARG_IS(13, float, 7.5f);

	must_register(++id, "StackFloats", "v(d d d d d d d d d d d d Cf Cf D i)", 0);
	probe_function = id;
	PROBE_AS(void (*)(d_, d_, d_, d_, d_, d_, d_, d_, d_, d_, d_, d_, _Complex float,
			  _Complex float, long double, int), probe_enter)(
		1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 1.5f + 2.5fi, 3.5f - 4.5fi,
		-2.0L / 3, -7);
	ARG_IS(12, _Complex float, 1.5f + 2.5fi);
	ARG_IS(13, _Complex float, 3.5f - 4.5fi);
	LD_IS(14, -2.0L / 3);
	ARG_IS(15, int32_t, -7);

#ifdef __SIZEOF_INT128__
	must_register(++id, "SplitInt128", "v(l l l l l l l q h)", 0);
	probe_function = id;
	PROBE_AS(void (*)(int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t,
			  __int128, int16_t), probe_enter)(
		1, 2, 3, 4, 5, 6, 7, ((__int128)0xabcdef << 64) | 0x12345678, -5);
	ARG_IS(7, __int128, ((__int128)0xabcdef << 64) | 0x12345678);
	ARG_IS(8, int16_t, -5);
#else
	tap_skip(2, "no __int128 on this ABI");
#endif

	must_register(++id, "AfterIntegers", "v(l l l l l l l l f c B d)", 0);
	probe_function = id;
	PROBE_AS(void (*)(int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t,
			  int64_t, float, char, uint8_t, double), probe_enter)(
		1, 2, 3, 4, 5, 6, 7, 8, 3.25f, 'q', 200, -0.5);
	ARG_IS(8, float, 3.25f);
	ARG_IS(9, char, 'q');
	ARG_IS(10, uint8_t, 200);
	ARG_IS(11, double, -0.5);

	must_register(++id, "Floats", "v(f f f f f f f f f f f f f f f f f)", 0);
	probe_function = id;
	PROBE_AS(void (*)(float, float, float, float, float, float, float, float, float,
			  float, float, float, float, float, float, float, float),
		 probe_enter)(1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14.5f, 15, 16, 17.5f);
	ARG_IS(0, float, 1.0f);
	ARG_IS(12, float, 13.0f);
	ARG_IS(13, float, 14.5f);
	ARG_IS(16, float, 17.5f);

	must_register(++id, "Variadic", "v(i ... d l D Cf d Cd)", 0);
	probe_function = id;
	PROBE_AS(void (*)(int, ...), probe_enter)(5, 2.5, (int64_t)-3, 4.5L,
						  1.0f + 2.0fi, 8.25, 3.0 - 1.0i);
	is_int(seen.enter_st, ELT_OK, "variadic arguments: decoded");
	ARG_IS(0, int32_t, 5);
	ARG_IS(1, double, 2.5);
	ARG_IS(2, int64_t, -3);
	LD_IS(3, 4.5L);
	ARG_IS(4, _Complex float, 1.0f + 2.0fi);
	ARG_IS(5, double, 8.25);
	ARG_IS(6, _Complex double, 3.0 - 1.0i);

	must_register(++id, "VariadicLate", "v(d d d d d d d d d d d d d ... d Cf D)", 0);
	probe_function = id;
	PROBE_AS(void (*)(d_, d_, d_, d_, d_, d_, d_, d_, d_, d_, d_, d_, d_, ...),
		 probe_enter)(1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14.5,
			      1.0f - 1.0fi, 7.0L / 3);
	ARG_IS(12, double, 13.0);
	ARG_IS(13, double, 14.5);
	ARG_IS(14, _Complex float, 1.0f - 1.0fi);
	LD_IS(15, 7.0L / 3);
}

/* --- return values -------------------------------------------------------- */

/* One function per type, each returning a known value the compiler puts
 * wherever the ABI says. */
#define RETURNER(name, type, value) \
	static type name(void) { return value; }
typedef void *pointer;
RETURNER(r_int8, int8_t, -7)
RETURNER(r_uint16, uint16_t, 60000)
RETURNER(r_int32, int32_t, -123456)
RETURNER(r_uint64, uint64_t, 0xfedcba9876543210ull)
RETURNER(r_pointer, pointer, (void *)&seen)
RETURNER(r_bool, _Bool, 1)
RETURNER(r_float, float, 2.75f)
RETURNER(r_double, double, -1e300)
RETURNER(r_ldouble, long double, 1.0L / 3)
RETURNER(r_cfloat, _Complex float, 1.5f - 0.5fi)
RETURNER(r_cdouble, _Complex double, 1.5 - 2.5i)
RETURNER(r_cldouble, _Complex long double, 4.0L + 5.0Li)
#ifdef __SIZEOF_INT128__
RETURNER(r_int128, __int128, ((__int128)0x2222 << 64) | 0x1111)
#endif

/* Registers `sig`, returns through the probe, checks the decoded range and
 * the value the caller receives. */
#define RETURNS(sig, type, fn, what)                                           \
	do {                                                                   \
		type got_, recv_;                                              \
		must_register(++id, what, sig, 0);                     \
		probe_function = id;                                           \
		probe_target = (void (*)(void))fn;                             \
		probe_continuation = 0;                                        \
		recv_ = PROBE_AS(type (*)(void), probe_leave)();               \
		memcpy(&got_, seen.ret_bytes, sizeof(got_));                   \
		ok(seen.return_st == ELT_OK && seen.ret.length == sizeof(type) \
		   && got_ == fn() && recv_ == fn(),                           \
		   "return %s: decoded, and received intact", what);           \
	} while (0)

static void test_returns(void)
{
	elt_function_id id = 0x5000;

	RETURNS("b()", int8_t, r_int8, "int8");
	RETURNS("H()", uint16_t, r_uint16, "uint16");
	RETURNS("i()", int32_t, r_int32, "int32");
	RETURNS("L()", uint64_t, r_uint64, "uint64");
	RETURNS("p()", pointer, r_pointer, "pointer");
	RETURNS("z()", _Bool, r_bool, "bool");
	RETURNS("f()", float, r_float, "float");
	RETURNS("d()", double, r_double, "double");
	RETURNS("D()", long double, r_ldouble, "long double");
	RETURNS("Cf()", _Complex float, r_cfloat, "complex float");
	RETURNS("Cd()", _Complex double, r_cdouble, "complex double");
	RETURNS("CD()", _Complex long double, r_cldouble, "complex long double");
#ifdef __SIZEOF_INT128__
	RETURNS("q()", __int128, r_int128, "int128");
#else
	tap_skip(1, "no __int128 on this ABI");
#endif

	must_register(++id, "Nothing", "v()", 0);
	probe_function = id;
	probe_target = (void (*)(void))probe_bare;
	probe_leave();
	ok(seen.return_st == ELT_OK && seen.ret.start == 0 && seen.ret.length == 0,
	   "void return: {0, 0}");
}

/* --- where registers run out ----------------------------------------------- */

static double r_variadic_double(int n, ...)
{
	return n - 0.25;
}

/* Arguments at the edges of the register files, where ABIs differ most:
 * a 64-bit or complex value that does not fit the registers left (split
 * between registers and the stack on some ABIs, skipping a register on
 * others), floating-point registers back-filled or not, and variadic
 * calls (some ABIs pass them differently from fixed ones, and may refuse
 * to decode them). */
static void test_register_pressure(void)
{
	elt_function_id id = 0x7000;
	_Complex float cf;
	_Complex double cd;
	double got;

	must_register(++id, "SplitCf", "v(i i i Cf i)", 0);
	probe_function = id;
	PROBE_AS(void (*)(int, int, int, _Complex float, int), probe_enter)(
		1, 2, 3, 4.5f - 5.5fi, 6);
	is_int(seen.enter_st, ELT_OK, "complex float after three ints: decoded");
	ARG_IS(2, int32_t, 3);
	memcpy(&cf, seen.args[3], sizeof(cf));
	ok(seen.ranges[3].length == sizeof(cf) && cf == 4.5f - 5.5fi,
	   "complex float after three ints");
	ARG_IS(4, int32_t, 6);

	must_register(++id, "SplitCd", "v(i i Cd i)", 0);
	probe_function = id;
	PROBE_AS(void (*)(int, int, _Complex double, int), probe_enter)(
		1, 2, -7.25 + 8.5i, 9);
	is_int(seen.enter_st, ELT_OK, "complex double after two ints: decoded");
	memcpy(&cd, seen.args[2], sizeof(cd));
	ok(seen.ranges[2].length == sizeof(cd) && cd == -7.25 + 8.5i,
	   "complex double after two ints");
	ARG_IS(3, int32_t, 9);

	must_register(++id, "SkipPair", "v(i i i l i)", 0);
	probe_function = id;
	PROBE_AS(void (*)(int, int, int, int64_t, int), probe_enter)(
		1, 2, 3, -0x123456789abcll, 10);
	is_int(seen.enter_st, ELT_OK, "int64 after three ints: decoded");
	ARG_IS(3, int64_t, -0x123456789abcll);
	ARG_IS(4, int32_t, 10);

	must_register(++id, "Backfill", "v(f d f f d f)", 0);
	probe_function = id;
	PROBE_AS(void (*)(float, double, float, float, double, float), probe_enter)(
		1.5f, 2.5, 3.5f, 4.5f, 5.5, 6.5f);
	is_int(seen.enter_st, ELT_OK, "floats and doubles interleaved: decoded");
	ARG_IS(0, float, 1.5f);
	ARG_IS(1, double, 2.5);
	ARG_IS(2, float, 3.5f);
	ARG_IS(3, float, 4.5f);
	ARG_IS(4, double, 5.5);
	ARG_IS(5, float, 6.5f);

	must_register(++id, "NoBackfill", "v(d d d d d d d f d f)", 0);
	probe_function = id;
	PROBE_AS(void (*)(double, double, double, double, double, double, double,
			  float, double, float), probe_enter)(
		1, 2, 3, 4, 5, 6, 7, 8.5f, 9.5, 10.5f);
	is_int(seen.enter_st, ELT_OK, "a double that no longer fits, then a float: decoded");
	ARG_IS(7, float, 8.5f);
	ARG_IS(8, double, 9.5);
	ARG_IS(9, float, 10.5f);

	must_register(++id, "CfNoFit", "v(f f f f f f f f f f f f f f f Cf f)", 0);
	probe_function = id;
	PROBE_AS(void (*)(float, float, float, float, float, float, float, float, float,
			  float, float, float, float, float, float, _Complex float, float),
		 probe_enter)(1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15.5f,
			      16.5f + 17.5fi, 18.5f);
	is_int(seen.enter_st, ELT_OK, "a complex float that no longer fits: decoded");
	ARG_IS(14, float, 15.5f);
	memcpy(&cf, seen.args[15], sizeof(cf));
	ok(seen.ranges[15].length == sizeof(cf) && cf == 16.5f + 17.5fi,
	   "complex float after 15 floats");
	ARG_IS(16, float, 18.5f);

	must_register(++id, "Variadic", "v(d ... d i)", 0);
	probe_function = id;
	PROBE_AS(void (*)(double, ...), probe_enter)(1.25, 2.5, 3);
	if (seen.enter_st == ELT_E_UNSUPPORTED) {
		tap_skip(3, "variadic arguments are not decoded on this ABI");
	} else {
		is_int(seen.enter_st, ELT_OK, "variadic arguments: decoded");
		ARG_IS(0, double, 1.25);
		memcpy(&got, seen.args[1], sizeof(got));
		ok(seen.ranges[1].length == 8 && got == 2.5 &&
		   *(int32_t *)seen.args[2] == 3, "variadic double and int");
	}

	must_register(++id, "VariadicResult", "d(i ...)", 0);
	probe_function = id;
	probe_target = (void (*)(void))r_variadic_double;
	probe_continuation = 0;
	got = PROBE_AS(double (*)(int, ...), probe_leave)(3);
	if (seen.return_st == ELT_E_UNSUPPORTED) {
		tap_skip(1, "variadic functions are not decoded on this ABI");
	} else {
		double decoded;

		memcpy(&decoded, seen.ret_bytes, sizeof(decoded));
		ok(seen.return_st == ELT_OK && seen.ret.length == 8 && decoded == 2.75 &&
		   got == 2.75, "double result of a variadic function: decoded, and "
		   "received intact");
	}
}

/* --- a real tail call ------------------------------------------------------ */

static struct {
	unsigned calls;
	void *p;
	int32_t i;
	double d;
} tail_seen;

static int64_t tail_target(void *p, int32_t i, double d)
{
	tail_seen.calls++;
	tail_seen.p = p;
	tail_seen.i = i;
	tail_seen.d = d;
	return (int64_t)(uintptr_t)p + 1000 * (int64_t)i + (int64_t)(d * 4);
}

/* Tailcall from a JIT's tail-call sequence: the helper runs with the
 * callee's arguments live, the frame goes, and a jump (not a call) reaches
 * the target, which returns straight to the C caller. */
static void test_tailcall_jump(void)
{
	elt_function_id id = 0x8000;
	void *ptr = (void *)(uintptr_t)0x5a5a0;
	unsigned before_calls = seen.calls;
	int64_t got;

	if (elt_register_function(++id, "TailCaller", "l(p i d)", 0) != ELT_OK)
		tap_bail("cannot register TailCaller: %s", elt_last_error());
	probe_function = id;
	probe_target = (void (*)(void))tail_target;
	memset(&tail_seen, 0, sizeof(tail_seen));
	got = PROBE_AS(int64_t (*)(void *, int32_t, double), probe_tailcall_jump)(ptr, 42, 2.5);
	is_int(seen.calls - before_calls, 1, "tail call: one callback");
	is_int(seen.kind, ELT_SEGMENT_TAILCALL, "tail call: a tailcall segment");
	is_int(seen.tailcall_st, ELT_OK, "tail call: tailcall info available");
	ok(seen.tail.function_id == id && seen.tail.caller_sp == probe_caller_sp &&
	   seen.tail.return_address == probe_return_address,
	   "tail call: its frame info (id, caller SP, return address)");
	ok(seen.fn && strcmp(seen.fn->name, "TailCaller") == 0, "tail call: the function's name");
	is_int(tail_seen.calls, 1, "tail call: the target ran once");
	ok(tail_seen.p == ptr && tail_seen.i == 42 && tail_seen.d == 2.5,
	   "tail call: the target received the arguments intact");
	ok(got == tail_target(ptr, 42, 2.5),
	   "tail call: the caller received the target's result");
}

/* --- the rest ------------------------------------------------------------- */

static void test_guard_and_unwind(void)
{
	unsigned before;

	recurse = 1;
	before = seen.calls;
	enter(PLAIN_ID, NULL);
	recurse = 0;
	is_int(seen.calls - before, 1, "instrumented code called by a plugin is not reported");
	ok(seen.intact_after_nested, "and the plugin's info is as it was before that code ran");

	unwind = 1;
	seen.backtrace_through_helper = seen.backtrace_reaches_caller = 0;
	enter(PLAIN_ID, NULL);
	unwind = 0;
	ok(seen.backtrace_through_helper,
	   "backtrace() from a plugin unwinds through the helper into its caller");
	ok(seen.backtrace_reaches_caller,
	   "and through the instrumented function into the C code that called it");
}

int main(void)
{
	if (elt_plugin_add(&elt_plugin_tester, NULL) != ELT_OK ||
	    elt_plugin_add(&elt_plugin_protocol, NULL) != ELT_OK)
		tap_bail("cannot add the test plugins: %s", elt_last_error());
	if (elt_register_function(ASYNC_ID, "AsyncWork", "l(K i)", ELT_FUNCTION_ASYNC) ||
	    elt_register_function(PLAIN_ID, "Plain", "l(p i)", 0) ||
	    elt_register_function(UNSIGNED_ID, "NoSignature", NULL, 0) ||
	    elt_register_function(LATE_K_ID, "LateK", "v(i i i i i i i i i K i)",
				  ELT_FUNCTION_ASYNC))
		tap_bail("cannot register: %s", elt_last_error());
	tap_diag("ABI: %s", elt_abi_name());

	test_classification();
	test_buffer_protocol();
	test_arguments();
	test_edges();
	test_exhaustion();
	test_returns();
	test_register_pressure();
	test_tailcall_jump();
	test_guard_and_unwind();
	ok(inline_getters.checked >= 50 && !inline_getters.disagreed,
	   "the inline getters agree with the library's in all %u segments (%u differ)",
	   inline_getters.checked, inline_getters.disagreed);
	elt_shutdown();
	return tap_done();
}
