/*
 * The binary recording format: what `logging:format=binary` writes and
 * what tools/dump (asyncelt-dump) reads.  The one definition of the
 * format; doc/recording.md describes it in prose.
 *
 * A file is a short text preamble followed by binary records:
 *
 *     asyncelt-recording 1\n          magic and format version
 *     pid 1234\n                      key value lines, any order
 *     abi x86_64-sysv\n
 *     byte-order little\n
 *     clock tsc ns\n                  what counted the times (rec_clocks), in ns
 *     base 81234567890\n              CLOCK_MONOTONIC at init: times count from it
 *     records\n                       the last line: binary from here on
 *
 * The preamble is text so that a plain pager identifies the file and so
 * that the per-thread buffers (plugins/common/tbuf.h) can write it again,
 * with the child's pid, at the top of a fork child's own file.
 *
 * Each record is a fixed REC_HEADER_SIZE-byte header in the writer's byte
 * order, a payload whose shape the kind fixes (below), and one '\n' byte:
 * the end of record the per-thread buffers mark (tbuf_end_line), checked
 * by the reader as a cheap sign that it is still in step.  A thread's
 * records reach the file in its order, in runs of whole records; runs of
 * different threads interleave, so the reader orders records by time.
 *
 * Payloads, by kind (u32/u64 in the writer's byte order, no padding):
 *   REC_CALL      u64 parent invocation; with REC_VALUE: u32 n, n bytes
 *                 (each argument's bytes in signature order, `this`
 *                 included, the continuation left out)
 *   REC_RESUME    u64 continuation, u32 segment, u32 previous thread
 *   REC_SUSPEND   u64 continuation
 *   REC_RETURN    with REC_VALUE: u32 n, n bytes (the return value)
 *   REC_TAILCALL  nothing
 *   REC_FUNCTION  u32 n, n bytes: u32 function flags (ELT_FUNCTION_*),
 *                 the name, '\0', the signature text ("" when registered
 *                 without one), '\0'.  The header's `function` is the
 *                 dense index the events use, `invocation` the function
 *                 id (its address), `thread` 0.
 * A function's REC_FUNCTION comes before any event that names it in its
 * thread's order, but may follow them in the file (threads interleave):
 * readers collect every definition first.
 */
#ifndef ELT_LOGGING_RECORDING_H
#define ELT_LOGGING_RECORDING_H

#include <stddef.h>
#include <stdint.h>

#define REC_MAGIC "asyncelt-recording"
#define REC_VERSION 1
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
};
#define REC_CLOCK_COUNT (sizeof(rec_clocks) / sizeof(rec_clocks[0]))

enum rec_kind {
	/* the five segment kinds, numbered as elt_segment_kind */
	REC_CALL, REC_RESUME, REC_SUSPEND, REC_RETURN, REC_TAILCALL,
	REC_FUNCTION,
	REC_KIND_COUNT
};

/* rec_header.thread_kind: thread index << 8 | flags << 4 | kind */
#define REC_KIND_MASK     0x0fu
#define REC_FLAG_SHIFT    4
#define REC_ORPHAN        0x1u  /* a resume never seen suspending (new id) */
#define REC_NO_INVOCATION 0x2u  /* the library matched it to no invocation */
#define REC_VALUE         0x4u  /* the payload carries value bytes */
#define REC_INCOMPLETE    0x8u  /* no value: the getter had no complete data */
#define REC_THREAD_SHIFT  8     /* threads past 2^24 wrap */

#define REC_UNREGISTERED UINT32_MAX     /* function of an unregistered id */

/* The fixed part of every record. */
struct rec_header {
	uint64_t time;          /* ns since base */
	uint64_t invocation;    /* 0 when REC_NO_INVOCATION */
	uint32_t function;      /* dense index, or REC_UNREGISTERED */
	uint32_t thread_kind;
};

#define REC_HEADER_SIZE 24
#define REC_END '\n'

_Static_assert(sizeof(struct rec_header) == REC_HEADER_SIZE,
	       "the record header is 24 bytes, no padding");
_Static_assert(offsetof(struct rec_header, invocation) == 8, "invocation at 8");
_Static_assert(offsetof(struct rec_header, function) == 16, "function at 16");
_Static_assert(offsetof(struct rec_header, thread_kind) == 20, "thread_kind at 20");

static inline uint32_t rec_pack(uint32_t thread, unsigned flags, enum rec_kind kind)
{
	return thread << REC_THREAD_SHIFT | (uint32_t)flags << REC_FLAG_SHIFT | (uint32_t)kind;
}

static inline enum rec_kind rec_kind_of(uint32_t thread_kind)
{
	return (enum rec_kind)(thread_kind & REC_KIND_MASK);
}

static inline unsigned rec_flags_of(uint32_t thread_kind)
{
	return (thread_kind >> REC_FLAG_SHIFT) & 0xfu;
}

static inline uint32_t rec_thread_of(uint32_t thread_kind)
{
	return thread_kind >> REC_THREAD_SHIFT;
}

/* The fixed payloads. */
struct rec_resume {
	uint64_t continuation;
	uint32_t segment;
	uint32_t previous_thread;
};
_Static_assert(sizeof(struct rec_resume) == 16, "resume payload: 16 bytes");

#endif
