/*
 * Chrome Trace Event JSON, one event a line, written into the per-thread
 * buffers of plugins/common/tbuf.h: what Perfetto UI, chrome://tracing and
 * speedscope open.  The file is a JSON array: TRACE_HEADER opens it with
 * the first events, every later event starts with a comma, TRACE_FOOTER
 * closes it.  Times are nanoseconds since the trace began, written as
 * microseconds with three decimals; names must be JSON-escaped already.
 */
#ifndef ELT_TIMING_TRACE_H
#define ELT_TIMING_TRACE_H

#include "../common/tbuf.h"

#include <stdbool.h>
#include <stdint.h>

/* A thread of its own for what is still open at exit: running segments,
 * and the ends of suspended invocations' arrows.  The largest tid, so that
 * viewers which sort threads (speedscope shows the first) list it last. */
#define TRACE_EXIT_TID 2147483647u
#define TRACE_EXIT_TID_TEXT "2147483647"

/* %p is the pid (tbuf expands it). */
#define TRACE_HEADER "[{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":%p,\"tid\":0," \
	"\"args\":{\"name\":\"asyncelt timing\"}}\n" \
	",{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":%p,\"tid\":" \
	TRACE_EXIT_TID_TEXT ",\"args\":{\"name\":\"open at exit\"}}\n"
#define TRACE_FOOTER "]\n"

/* One physical segment: an X slice on its thread.  A flow arrow runs from
 * the slice of each suspension (flow_out) to the slice of its resume
 * (flow_in), bound by `track`. */
struct trace_slice {
	const char *name;
	uint32_t tid;
	uint64_t start_ns, end_ns;
	uint64_t invocation;
	uint64_t track;                 /* the id of its flows and async track:
					   the invocation id, unless ids repeat
					   in the trace (several processes) */
	uint32_t segment;               /* 0: the initial call's */
	bool flow_in, flow_out;
	bool incomplete;                /* cut short at exit */
};

/* One logical invocation: a b/e pair on the async track cat "invocation",
 * id `track`, spanning its wall time. */
struct trace_span {
	const char *name;
	uint64_t invocation;
	uint64_t track;                 /* as trace_slice's */
	uint32_t begin_tid, end_tid;
	uint64_t begin_ns, end_ns;
	uint32_t segments, hops;
	uint64_t active_ns;
	bool incomplete;                /* still suspended or running at exit */
};

void trace_thread_name(struct tbuf *b, const char *pid, uint32_t tid);
void trace_slice(struct tbuf *b, const char *pid, const struct trace_slice *s);
void trace_span(struct tbuf *b, const char *pid, const struct trace_span *s);

#endif
