/*
 * The binary recording format: what `logging:format=binary` writes and
 * what tools/dump (asyncelt-dump) reads.  The one definition of the
 * format; doc/recording.md describes it in prose.
 *
 * A file is a short text preamble followed by binary records:
 *
 *     asyncelt-recording 4\n          magic and format version
 *     pid 1234\n                      key value lines, any order
 *     abi x86_64-sysv\n
 *     byte-order little\n
 *     clock tsc ns\n                  what counted the times (rec_clocks), in ns
 *     base 81234567890\n              CLOCK_MONOTONIC at init: times count from it
 *     buffer 65536\n                  the writer's buffer: a value is shorter
 *     records\n                       the last line: binary from here on
 *
 * A reader ignores keys it does not know.  `buffer` bounds every value:
 * the writer leaves out a value that its whole buffer would not hold
 * (REC_INCOMPLETE), so a longer value length is damage, not a file cut
 * short.  (Files from before the line have no such bound.)
 *
 * The preamble is text so that a plain pager identifies the file and so
 * that the per-thread buffers (plugins/common/tbuf.h) can write it again,
 * with the child's pid, at the top of a fork child's own file.
 *
 * A record is a tag byte (flags << 4 | kind), fields that the kind fixes,
 * and one '\n' byte: the end of record the per-thread buffers mark
 * (tbuf_end_line), checked by the reader as a cheap sign that it is still
 * in step.  Numbers are unsigned LEB128 ("n" below: 7 bits a byte, low
 * first, the top bit set on all but the last; at most 10 bytes), so a
 * record is mostly 6 to 8 bytes.  Only value bytes depend on the writer's
 * byte order.
 *
 * A thread's records reach the file in its order, in runs: each write of
 * a thread's events starts with a REC_RUN record naming the thread and a
 * time (a write of a function record alone needs none), and the events
 * after it, up to the next REC_RUN, are that thread's, each one's time
 * and invocation given as the difference from the event before it in the
 * run.  Runs of different threads interleave,
 * so the reader orders events by time.
 *
 *   REC_RUN       n thread, n time (ns since base); the run's invocation
 *                 starts at 0
 *   events        n time - the previous time in the run (mod 2^64),
 *                 n function index + 1, or 0 then n the function's id
 *                 (its address) for a function without a REC_FUNCTION
 *                 record (unregistered, or past REC_FUNCTIONS_MAX;
 *                 version 2 had no id),
 *                 unless REC_NO_INVOCATION: n zigzag(invocation - the
 *                 previous invocation in the run), then by kind:
 *     REC_CALL      n parent: 0 when none, else zigzag(invocation -
 *                   parent) + 1; with REC_VALUE: n length, the bytes
 *                   (each argument's in signature order, `this` included,
 *                   the continuation left out)
 *     REC_RESUME    n continuation, n segment, n previous thread
 *     REC_SUSPEND   n continuation
 *     REC_RETURN    with REC_VALUE: n length, the bytes (the return value)
 *     REC_TAILCALL  nothing
 *   REC_FUNCTION  n dense index (what events name; below
 *                 REC_FUNCTIONS_MAX), n function id (its
 *                 address), n flags (ELT_FUNCTION_*), the name, '\0', the
 *                 signature text ("" when registered without one), '\0';
 *                 it leaves the run as it was
 *   REC_CLOSE     nothing: the writer closed the file, every buffer out
 *                 before it (version 4 on).  A file without one was cut
 *                 off by its process's end (killed, abort, _exit, a
 *                 crash): what its threads had buffered is not in it.  A
 *                 fork child writes its own file (tbuf_file_per_process),
 *                 except on a device or a pipe, where it adds its own.
 * An event without an invocation (REC_NO_INVOCATION) is its run's
 * thread's all the same.  A function's
 * REC_FUNCTION comes before any event that names it in its thread's
 * order, but may follow them in the file (threads interleave): readers
 * collect every definition first.
 */
#ifndef ELT_LOGGING_RECORDING_H
#define ELT_LOGGING_RECORDING_H

#include <stddef.h>
#include <stdint.h>

#define REC_MAGIC "asyncelt-recording"
#define REC_VERSION 4
#define REC_VERSION_OLDEST 2    /* the oldest a reader still reads */
#define REC_PREAMBLE_END "records\n"
/* The preamble never exceeds this (tbuf expands a header into 1 KB). */
#define REC_PREAMBLE_MAX 1024

/* The preamble's clock line names what counted the times, always in ns
 * from `base`: CLOCK_MONOTONIC itself, or the CPU's counter calibrated
 * against it when the recording started (plugins/common/clock.h's
 * sources, by the names plugin_clock_name() gives them). */
static const char *const rec_clocks[][2] = {
	/* source,         clock line */
	{ "clock_gettime", "CLOCK_MONOTONIC ns" },
	{ "tsc",           "tsc ns" },
	{ "cntvct",        "cntvct ns" },
	{ "timebase",      "timebase ns" },
	{ "tod",           "tod ns" },
	{ "rdtime",        "rdtime ns" },
};
#define REC_CLOCK_COUNT (sizeof(rec_clocks) / sizeof(rec_clocks[0]))

enum rec_kind {
	/* the five segment kinds, numbered as elt_segment_kind */
	REC_CALL, REC_RESUME, REC_SUSPEND, REC_RETURN, REC_TAILCALL,
	REC_FUNCTION,
	REC_RUN,
	REC_CLOSE,
	REC_KIND_COUNT
};

/* The tag byte: flags << 4 | kind. */
#define REC_KIND_MASK     0x0fu
#define REC_FLAG_SHIFT    4
#define REC_ORPHAN        0x1u  /* a resume never seen suspending (new id) */
#define REC_NO_INVOCATION 0x2u  /* the library matched it to no invocation */
#define REC_VALUE         0x4u  /* the record carries value bytes */
#define REC_INCOMPLETE    0x8u  /* no value: the getter had no complete data,
				   or it was longer than the writer's buffer */

/* A call's arguments are recorded up to this many, in every format of
 * the logging plugin (their ranges live on the instrumented thread's
 * stack, which may be small); a call with more has none, and the reason
 * below, which the reader gives too, from the function's signature. */
#define REC_ARGS_MAX 16
#define REC_ARGS_BEYOND "more arguments than the logging plugin decodes (16)"
_Static_assert(REC_ARGS_MAX == 16, "REC_ARGS_BEYOND names the limit");

#define REC_UNREGISTERED UINT32_MAX     /* function of an unregistered id */
/* A reader refuses function indexes from here on: in a file they are far
 * likelier damage than the 16 millionth registered function, and their
 * table would be large.  The writer records the functions registered
 * after that many by their ids, as it does unregistered ones. */
#define REC_FUNCTIONS_MAX (1u << 24)
#define REC_END '\n'

/* The longest a number takes, and the most an event's fixed part does:
 * tag, time, function and its id, invocation, three payload numbers,
 * value length. */
#define REC_NUMBER_MAX 10
#define REC_EVENT_MAX (1 + 8 * REC_NUMBER_MAX)
#define REC_RUN_MAX (1 + 2 * REC_NUMBER_MAX + 1)

static inline uint8_t rec_tag(unsigned flags, enum rec_kind kind)
{
	return (uint8_t)(flags << REC_FLAG_SHIFT | (unsigned)kind);
}

static inline enum rec_kind rec_kind_of(uint8_t tag)
{
	return (enum rec_kind)(tag & REC_KIND_MASK);
}

static inline unsigned rec_flags_of(uint8_t tag)
{
	return (unsigned)tag >> REC_FLAG_SHIFT;
}

/* Appends v as a number; returns the byte after it. */
static inline uint8_t *rec_put_number(uint8_t *p, uint64_t v)
{
	while (v >= 0x80) {
		*p++ = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	*p++ = (uint8_t)v;
	return p;
}

/* Signed differences as numbers: 0, -1, 1, -2 ... as 0, 1, 2, 3 ... */
static inline uint64_t rec_zigzag(uint64_t difference)
{
	return difference << 1 ^ (uint64_t)-(int64_t)(difference >> 63);
}

static inline uint64_t rec_unzigzag(uint64_t v)
{
	return v >> 1 ^ (uint64_t)-(int64_t)(v & 1);
}

#endif
