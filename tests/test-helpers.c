/*
 * The helpers of this build's ABI, called as instrumented code calls them:
 *  - register preservation: every argument, return, continuation and
 *    callee-saved register canaried, the plugin clobbering all it can;
 *  - classification of every segment kind and the DATAINCOMPLETE contract;
 *  - scalar arguments and return values, with the C compiler placing them
 *    (the function pointer casts below) as the oracle;
 *  - unknown ids, the recursion guard, unwinding through a helper.
 */
#define ELT_PLUGIN_STATIC 1   /* several plugins in one program */
#include "tap.h"
#include "regs.h"

#include <asyncelt.h>
#include <asyncelt/helpers.h>
#include <asyncelt/plugin.h>

#include <cpuid.h>
#include <execinfo.h>
#include <math.h>
#include <stddef.h>
#include <stdint.h>

_Static_assert(offsetof(struct regs, vec) == REGS_VEC, "REGS_VEC");
_Static_assert(offsetof(struct regs, x87) == REGS_X87, "REGS_X87");
_Static_assert(offsetof(struct regs, x87_depth) == REGS_X87_DEPTH, "REGS_X87_DEPTH");
_Static_assert(offsetof(struct regs, mxcsr) == REGS_MXCSR, "REGS_MXCSR");
_Static_assert(offsetof(struct regs, fpucw) == REGS_FPUCW, "REGS_FPUCW");
_Static_assert(offsetof(struct regs, width) == REGS_WIDTH, "REGS_WIDTH");
_Static_assert(offsetof(struct regs, misalign) == REGS_MISALIGN, "REGS_MISALIGN");
_Static_assert(offsetof(struct regs, function_id) == REGS_FUNCTION_ID, "REGS_FUNCTION_ID");
_Static_assert(offsetof(struct regs, caller_sp) == REGS_CALLER_SP, "REGS_CALLER_SP");
_Static_assert(sizeof(struct regs) == REGS_SIZE, "REGS_SIZE");
_Static_assert(offsetof(struct probe_return, rdx) == PROBE_RDX, "PROBE_RDX");
_Static_assert(offsetof(struct probe_return, rcx) == PROBE_RCX, "PROBE_RCX");
_Static_assert(offsetof(struct probe_return, xmm0) == PROBE_XMM0, "PROBE_XMM0");
_Static_assert(offsetof(struct probe_return, xmm1) == PROBE_XMM1, "PROBE_XMM1");
_Static_assert(offsetof(struct probe_return, st) == PROBE_ST, "PROBE_ST");
_Static_assert(offsetof(struct probe_return, x87_depth) == PROBE_X87_DEPTH, "PROBE_X87_DEPTH");

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
	elt_frame_info frame;
	elt_status enter_st, return_st, tailcall_st;
	size_t nargs, total;
	elt_range ranges[MAX_ARGS];
	unsigned char args[MAX_ARGS][32];
	elt_range ret;
	unsigned char ret_bytes[64];
	int backtrace_through_helper;
} seen;

static int clobber, recurse, unwind;

/* Damages every caller-saved register, as any C code may. */
static void clobber_everything(void)
{
	static unsigned char big_a[8192], big_b[8192];
	char text[128];
	volatile double x = 1.5;
	unsigned a, b, c, d;

	memset(big_a, 0x5a, sizeof(big_a));
	memcpy(big_b, big_a, sizeof(big_b));     /* glibc: vector moves */
	snprintf(text, sizeof(text), "%f %g %Lf", x * 3.25, sqrt(x), (long double)x / 3);
	x = strlen(text) + x * x;                /* glibc: vector compares */
	__asm__ volatile("pxor %%xmm0, %%xmm0; pcmpeqd %%xmm1, %%xmm1; "
			 "movdqa %%xmm1, %%xmm2; movdqa %%xmm1, %%xmm3; "
			 "movdqa %%xmm1, %%xmm4; movdqa %%xmm1, %%xmm5; "
			 "movdqa %%xmm1, %%xmm6; movdqa %%xmm1, %%xmm7"
			 ::: "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7");
	if (__get_cpuid(1, &a, &b, &c, &d) && (c & bit_AVX) && (c & bit_OSXSAVE))
		__asm__ volatile("vpcmpeqd %%ymm0, %%ymm0, %%ymm0; vmovdqa %%ymm0, %%ymm1; "
				 "vmovdqa %%ymm0, %%ymm7; vzeroupper"
				 ::: "xmm0", "xmm1", "xmm7");
	__asm__ volatile("mov $-1, %%rax; mov %%rax, %%rcx; mov %%rax, %%rdx; "
			 "mov %%rax, %%rsi; mov %%rax, %%rdi; mov %%rax, %%r8; "
			 "mov %%rax, %%r9; mov %%rax, %%r10; mov %%rax, %%r11"
			 ::: "rax", "rcx", "rdx", "rsi", "rdi", "r8", "r9", "r10", "r11");
}

static void record(const elt_info *info)
{
	size_t i;

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
	{
		elt_frame_info f;
		seen.tailcall_st = elt_get_tailcall_info(info, &f);
	}
	if (recurse)
		probe_enter();          /* instrumented code, called by a plugin */
	if (unwind) {
		void *pcs[32];
		int n = backtrace(pcs, 32);

		for (i = 0; i < (size_t)n; i++)
			if ((uintptr_t)pcs[i] > (uintptr_t)probe_enter &&
			    (uintptr_t)pcs[i] <= (uintptr_t)probe_enter_end)
				seen.backtrace_through_helper = 1;
	}
	if (clobber)
		clobber_everything();
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

/* --- registers ----------------------------------------------------------- */

static unsigned vector_width(void)
{
	unsigned a, b, c, d;
	uint32_t lo, hi;

	if (!__get_cpuid(1, &a, &b, &c, &d) || !(c & bit_OSXSAVE) || !(c & bit_AVX))
		return 0;
	__asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
	if ((lo & 6) != 6)
		return 0;
	if (__get_cpuid_count(7, 0, &a, &b, &c, &d) && (b & bit_AVX512F) &&
	    (lo & 0xe6) == 0xe6)
		return 2;
	return 1;
}

static uint64_t fake_stack[8];

static void fill(struct regs *in, unsigned width, unsigned x87_depth, unsigned seed)
{
	int i, j;

	memset(in, 0, sizeof(*in));
	for (i = 0; i < 16; i++)
		in->gpr[i] = 0x1111111111111111ull * (uint64_t)(i + 1) ^ seed;
	for (i = 0; i < 16; i++)
		for (j = 0; j < 64; j++)
			in->vec[i][j] = (unsigned char)(i * 64 + j + seed);
	for (i = 0; i < 2; i++) {
		long double v = 1.25L + i + seed;
		memcpy(in->x87[i], &v, 10);
	}
	in->x87_depth = x87_depth;
	in->mxcsr = 0x1f80 | 0x6000;    /* masked, round toward zero */
	in->fpucw = 0x027f;            /* double precision, all masked */
	in->width = width;
	fake_stack[0] = 0xfeedface;     /* the return address slot */
	in->caller_sp = (uint64_t)(uintptr_t)&fake_stack[1];
}

static int compare(const struct regs *in, const struct regs *out, unsigned width,
		   char *why, size_t why_len)
{
	static const char *const names[16] = { "rax", "rcx", "rdx", "rbx", "rsp", "rbp",
		"rsi", "rdi", "r8", "r9", "r10", "r11", "r12", "r13", "r14", "r15" };
	size_t bytes = width == 2 ? 64 : width == 1 ? 32 : 16;
	unsigned i;

	if (out->gpr[RSP] != fixture_rsp_at_call)
		return snprintf(why, why_len, "rsp %#llx became %#llx",
				(unsigned long long)fixture_rsp_at_call,
				(unsigned long long)out->gpr[RSP]), 0;
	for (i = 0; i < 16; i++)
		if (i != RSP && in->gpr[i] != out->gpr[i])
			return snprintf(why, why_len, "%s %#llx became %#llx", names[i],
					(unsigned long long)in->gpr[i],
					(unsigned long long)out->gpr[i]), 0;
	for (i = 0; i < 8; i++)
		if (memcmp(in->vec[i], out->vec[i], bytes))
			return snprintf(why, why_len, "vector register %u (%zu bytes) changed",
					i, bytes), 0;
	if (in->x87_depth != out->x87_depth)
		return snprintf(why, why_len, "x87 depth %u became %u", in->x87_depth,
				out->x87_depth), 0;
	for (i = 0; i < in->x87_depth; i++)
		if (memcmp(in->x87[i], out->x87[i], 10))
			return snprintf(why, why_len, "st%u changed", i), 0;
	if ((in->mxcsr & 0xffc0) != (out->mxcsr & 0xffc0))
		return snprintf(why, why_len, "mxcsr control %#x became %#x", in->mxcsr,
				out->mxcsr), 0;
	if ((in->fpucw & 0x1f3f) != (out->fpucw & 0x1f3f))
		return snprintf(why, why_len, "x87 control %#x became %#x", in->fpucw,
				out->fpucw), 0;
	return 1;
}

static const elt_function_id ASYNC_ID = 0x1000, PLAIN_ID = 0x2000,
	UNSIGNED_ID = 0x3000, UNKNOWN_ID = 0x9999;

static void test_preservation(void)
{
	static const struct { const char *name; void (*helper)(void); unsigned x87; } h[] = {
		{ "enter", elt_helper_enter, 0 },
		{ "leave", elt_helper_leave, 0 },
		{ "leave, long double result", elt_helper_leave, 1 },
		{ "leave, complex long double result", elt_helper_leave, 2 },
		{ "tailcall", elt_helper_tailcall, 0 },
	};
	unsigned width = vector_width();
	unsigned i, misalign, cont;

	tap_diag("vector width: %s", width == 2 ? "AVX-512 (zmm)" : width ? "AVX (ymm)" : "SSE (xmm)");
	clobber = 1;
	for (i = 0; i < sizeof(h) / sizeof(h[0]); i++)
		for (misalign = 0; misalign < 2; misalign++)
			for (cont = 0; cont < 2; cont++) {
				struct regs in, out;
				char why[160] = "";
				unsigned before = seen.calls;
				int same;

				fill(&in, width, h[i].x87, i * 4 + misalign * 2 + cont);
				in.misalign = misalign;
				in.function_id = cont ? ASYNC_ID : UNKNOWN_ID;
				if (!cont) {    /* a NULL continuation: call or return */
					in.gpr[RDI] = 0;
					in.gpr[RCX] = 0;
				}
				memset(&out, 0, sizeof(out));
				out.width = in.width;   /* how much to capture */
				fixture_call_helper(h[i].helper, &in, &out);
				same = compare(&in, &out, width, why, sizeof(why));
				ok(same && seen.calls == before + 1,
				   "%s preserves every register (%s stack, %s)", h[i].name,
				   misalign ? "misaligned" : "aligned",
				   cont ? "async, continuation set" : "unknown function");
				if (!same)
					tap_diag("  %s", why);
				if (seen.calls != before + 1)
					tap_diag("  the plugin ran %u times", seen.calls - before);
			}
	clobber = 0;
}

/* --- classification ------------------------------------------------------ */

static void call_with(void (*helper)(void), elt_function_id id, uint64_t rdi,
		      uint64_t rcx)
{
	struct regs in, out;

	fill(&in, 0, 0, 7);
	in.function_id = id;
	in.gpr[RDI] = rdi;
	in.gpr[RCX] = rcx;
	in.gpr[RSI] = 42;               /* the i argument */
	in.gpr[RAX] = 0x0123456789abcdefull;
	out.width = in.width;
	fixture_call_helper(helper, &in, &out);
}

static void test_classification(void)
{
	/* async "l(K i)": K in rdi, i in esi, result in rax */
	call_with(elt_helper_enter, ASYNC_ID, 0, 0x77);
	is_int(seen.kind, ELT_SEGMENT_CALL, "Enter, NULL continuation: call");
	is_int(seen.enter_st, ELT_OK, "call: enter info available");
	is_int(seen.nargs, 1, "call: one argument (K is not reported)");
	is_int(*(int32_t *)seen.args[0], 42, "call: the int32 argument");
	ok(seen.continuation == NULL && seen.continuation_st == ELT_OK,
	   "call: continuation NULL");
	is_int(seen.return_st, ELT_E_WRONG_CALLBACK, "call: no return info in an Enter");
	is_int(seen.tailcall_st, ELT_E_WRONG_CALLBACK, "call: no tailcall info in an Enter");
	ok(seen.frame.function_id == ASYNC_ID &&
	   seen.frame.caller_sp == (uintptr_t)&fake_stack[1] &&
	   seen.frame.return_address == 0xfeedface,
	   "call: frame info (id, caller SP, return address)");
	ok(seen.fn && strcmp(seen.fn->name, "AsyncWork") == 0, "call: the function's name");
	ok(seen.data == (void *)(uintptr_t)(seen.fn->index + 1000),
	   "call: the plugin's function data");

	call_with(elt_helper_enter, ASYNC_ID, 0xc0ffee, 0);
	is_int(seen.kind, ELT_SEGMENT_RESUME, "Enter, continuation set: resume");
	is_int(seen.enter_st, ELT_E_DATAINCOMPLETE, "resume: arguments DATAINCOMPLETE");
	is_int(seen.nargs, 0, "resume: no ranges");
	ok(seen.continuation == (void *)0xc0ffee, "resume: the continuation argument");

	call_with(elt_helper_leave, ASYNC_ID, 0, 0xbeef0);
	is_int(seen.kind, ELT_SEGMENT_SUSPEND, "Leave, continuation returned: suspend");
	is_int(seen.return_st, ELT_E_DATAINCOMPLETE, "suspend: return DATAINCOMPLETE");
	ok(seen.ret.start == 0 && seen.ret.length == 0, "suspend: no return range");
	ok(seen.continuation == (void *)0xbeef0, "suspend: the continuation returned");
	is_int(seen.enter_st, ELT_E_WRONG_CALLBACK, "suspend: no enter info in a Leave");

	call_with(elt_helper_leave, ASYNC_ID, 0, 0);
	is_int(seen.kind, ELT_SEGMENT_RETURN, "Leave, no continuation: final return");
	is_int(seen.return_st, ELT_OK, "return: value available");
	ok(seen.ret.length == 8 && *(uint64_t *)seen.ret_bytes == 0x0123456789abcdefull,
	   "return: the int64 result from rax");

	call_with(elt_helper_tailcall, ASYNC_ID, 0x1234, 0x5678);
	is_int(seen.kind, ELT_SEGMENT_TAILCALL, "Tailcall: tailcall");
	is_int(seen.tailcall_st, ELT_OK, "tailcall: frame info available");
	is_int(seen.enter_st, ELT_E_WRONG_CALLBACK, "tailcall: no enter info");

	/* not async: the continuation registers mean nothing */
	call_with(elt_helper_enter, PLAIN_ID, 0xc0ffee, 0);
	is_int(seen.kind, ELT_SEGMENT_CALL, "non-async Enter with rdi set: still a call");
	ok(seen.continuation == NULL, "non-async: no continuation");
	call_with(elt_helper_leave, PLAIN_ID, 0, 0xbeef0);
	is_int(seen.kind, ELT_SEGMENT_RETURN, "non-async Leave with rcx set: still a return");

	/* never registered */
	call_with(elt_helper_enter, UNKNOWN_ID, 0xc0ffee, 0);
	ok(seen.kind == ELT_SEGMENT_CALL && seen.fn == NULL && seen.data == NULL,
	   "unknown id: dispatched as a call, no function");
	is_int(seen.enter_st, ELT_E_UNKNOWN_FUNCTION, "unknown id: enter info says so");
	is_int(seen.continuation_st, ELT_E_UNKNOWN_FUNCTION, "unknown id: continuation says so");
	is_int(seen.frame.function_id, UNKNOWN_ID, "unknown id: frame info still given");
	call_with(elt_helper_leave, UNKNOWN_ID, 0, 0xbeef0);
	ok(seen.kind == ELT_SEGMENT_RETURN && seen.return_st == ELT_E_UNKNOWN_FUNCTION,
	   "unknown id: Leave is a return, return info says unknown");

	call_with(elt_helper_enter, UNSIGNED_ID, 0, 0);
	is_int(seen.enter_st, ELT_E_NO_SIGNATURE, "registered without signature: says so");
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
	call_with(elt_helper_enter, PLAIN_ID, 0x10, 0);
	ok(protocol_st[0] == ELT_E_INSUFFICIENT_BUFFER && protocol_count[0] == 2,
	   "count 0: insufficient buffer, 2 needed");
	ok(protocol_st[1] == ELT_E_INSUFFICIENT_BUFFER && protocol_count[1] == 2,
	   "count 1: insufficient buffer, 2 needed");
	ok(protocol_st[2] == ELT_OK && protocol_count[2] == 2, "count 2: filled");
}

/* --- scalar decoding with the compiler as the oracle --------------------- */

/* The probes, as a function pointer of any prototype.  Read through a
 * volatile pointer: the compiler cannot tell the calls' types apart from
 * the assembly's declaration, which is the point. */
static void (*volatile enter_probe)(void) = probe_enter;
static void (*volatile leave_probe)(void) = probe_leave;
#define AS(type, fn) ((type)fn)
typedef void *pointer;

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

	/* 10 integers and 10 floating-point values: both kinds of register
	 * run out and the rest goes on the stack, interleaved. */
	elt_register_function(id, "Scalars", "v(b B h H i I l L p z d f d f d f d f d f q c)", 0);
	probe_function = id;
	AS(void (*)(int8_t, uint8_t, int16_t, uint16_t, int32_t, uint32_t, int64_t, uint64_t,
		    void *, _Bool, double, float, double, float, double, float, double,
		    float, double, float, __int128, char), enter_probe)(
		-5, 250, -3000, 65000, -2000000000, 4000000000u, -9000000000000000000ll,
		18000000000000000000ull, (void *)&fake_stack, 1, 1.5, 2.5f, 3.5, 4.5f, 5.5,
		6.5f, 7.5, 8.5f, 9.5, 10.5f, ((__int128)0x1234 << 64) | 0x5678, 'x');
	is_int(seen.enter_st, ELT_OK, "22 scalar arguments: decoded");
	is_int(seen.nargs, 22, "22 ranges");
	ARG_IS(0, int8_t, -5);
	ARG_IS(1, uint8_t, 250);
	ARG_IS(2, int16_t, -3000);
	ARG_IS(3, uint16_t, 65000);
	ARG_IS(4, int32_t, -2000000000);
	ARG_IS(5, uint32_t, 4000000000u);
	ARG_IS(6, int64_t, -9000000000000000000ll);
	ARG_IS(7, uint64_t, 18000000000000000000ull);
	ARG_IS(8, void *, (void *)&fake_stack);
	ARG_IS(9, _Bool, 1);
	ARG_IS(10, double, 1.5);
	ARG_IS(11, float, 2.5f);
	ARG_IS(12, double, 3.5);
	ARG_IS(13, float, 4.5f);
	ARG_IS(14, double, 5.5);
	ARG_IS(15, float, 6.5f);
	ARG_IS(16, double, 7.5);
	ARG_IS(17, float, 8.5f);
	ARG_IS(18, double, 9.5);        /* 9th FP argument: on the stack */
	ARG_IS(19, float, 10.5f);
	ARG_IS(20, __int128, ((__int128)0x1234 << 64) | 0x5678);
	ARG_IS(21, char, 'x');
	is_int(seen.total, 1 + 1 + 2 + 2 + 4 + 4 + 8 + 8 + 8 + 1 + 5 * 8 + 5 * 4 + 16 + 1,
	       "total size of the arguments");

	id = 0x4001;
	elt_register_function(id, "LongDouble", "v(D i CD Cf Cd)", 0);
	probe_function = id;
	AS(void (*)(long double, int, _Complex long double, _Complex float,
		    _Complex double), enter_probe)(
		3.25L, 7, 1.0L + 2.0Li, 3.0f + 4.0fi, 5.0 + 6.0i);
	is_int(seen.enter_st, ELT_OK, "long double and complex arguments: decoded");
	{
		long double ld;
		_Complex long double cld;
		_Complex float cf;
		_Complex double cd;

		memcpy(&ld, seen.args[0], 10);
		ok(ld == 3.25L, "long double on the stack");
		ARG_IS(1, int32_t, 7);
		memcpy(&cld, seen.args[2], sizeof(cld));
		ok(seen.ranges[2].length == sizeof(cld) && cld == 1.0L + 2.0Li,
		   "complex long double on the stack");
		memcpy(&cf, seen.args[3], sizeof(cf));
		ok(cf == 3.0f + 4.0fi, "complex float in one xmm register");
		memcpy(&cd, seen.args[4], sizeof(cd));
		ok(cd == 5.0 + 6.0i, "complex double reassembled from two xmm registers");
	}
}

#define RETURNS(sig, type, load, want, what)                                   \
	do {                                                                   \
		type got_, recv_;                                              \
		elt_register_function(++id, what, sig, 0);                     \
		probe_function = id;                                           \
		memset(&probe_return, 0, sizeof(probe_return));                \
		load;                                                          \
		recv_ = AS(type (*)(void), leave_probe)();                       \
		memcpy(&got_, seen.ret_bytes, sizeof(got_));                   \
		ok(seen.return_st == ELT_OK && seen.ret.length == sizeof(type) \
		   && got_ == (want) && recv_ == (want),                       \
		   "return %s: decoded and received intact", what);            \
	} while (0)

static void test_returns(void)
{
	elt_function_id id = 0x5000;

	RETURNS("b()", int8_t, probe_return.rax = (uint8_t)-7, -7, "int8");
	RETURNS("H()", uint16_t, probe_return.rax = 60000, 60000, "uint16");
	RETURNS("i()", int32_t, probe_return.rax = (uint32_t)-123456, -123456, "int32");
	RETURNS("L()", uint64_t, probe_return.rax = 0xfedcba9876543210ull,
		0xfedcba9876543210ull, "uint64");
	RETURNS("p()", pointer, probe_return.rax = 0x7fff1234, (void *)0x7fff1234, "pointer");
	RETURNS("q()", __int128, (probe_return.rax = 0x1111, probe_return.rdx = 0x2222),
		((__int128)0x2222 << 64) | 0x1111, "int128 (rax:rdx)");
	RETURNS("f()", float, ({ float v = 2.75f; memcpy(probe_return.xmm0, &v, 4); }),
		2.75f, "float");
	RETURNS("d()", double, ({ double v = -1e300; memcpy(probe_return.xmm0, &v, 8); }),
		-1e300, "double");
	RETURNS("D()", long double, (probe_return.st[0] = 1.0L / 3, probe_return.x87_depth = 1),
		1.0L / 3, "long double (st0)");
	RETURNS("Cd()", _Complex double, ({ double re = 1.5, im = -2.5;
		memcpy(probe_return.xmm0, &re, 8); memcpy(probe_return.xmm1, &im, 8); }),
		1.5 - 2.5i, "complex double (xmm0, xmm1)");
	RETURNS("CD()", _Complex long double, (probe_return.st[0] = 4.0L, probe_return.st[1] = 5.0L,
		probe_return.x87_depth = 2), 4.0L + 5.0Li, "complex long double (st0, st1)");

	elt_register_function(++id, "Nothing", "v()", 0);
	probe_function = id;
	probe_leave();
	ok(seen.return_st == ELT_OK && seen.ret.start == 0 && seen.ret.length == 0,
	   "void return: {0, 0}");
}

/* --- the rest ------------------------------------------------------------- */

static void test_guard_and_unwind(void)
{
	unsigned before;

	probe_function = PLAIN_ID;
	recurse = 1;
	before = seen.calls;
	AS(void (*)(void *, int), enter_probe)(NULL, 1);
	recurse = 0;
	is_int(seen.calls - before, 1, "instrumented code called by a plugin is not reported");

	unwind = 1;
	seen.backtrace_through_helper = 0;
	AS(void (*)(void *, int), enter_probe)(NULL, 1);
	unwind = 0;
	ok(seen.backtrace_through_helper,
	   "backtrace() from a plugin unwinds through the helper into its caller");
}

int main(void)
{
	if (elt_plugin_add(&elt_plugin_tester, NULL) != ELT_OK ||
	    elt_plugin_add(&elt_plugin_protocol, NULL) != ELT_OK)
		tap_bail("cannot add the test plugins: %s", elt_last_error());
	if (elt_register_function(ASYNC_ID, "AsyncWork", "l(K i)", ELT_FUNCTION_ASYNC) ||
	    elt_register_function(PLAIN_ID, "Plain", "l(p i)", 0) ||
	    elt_register_function(UNSIGNED_ID, "NoSignature", NULL, 0))
		tap_bail("cannot register: %s", elt_last_error());

	test_preservation();
	test_classification();
	test_buffer_protocol();
	test_arguments();
	test_returns();
	test_guard_and_unwind();
	elt_shutdown();
	return tap_done();
}
