/*
 * Chrome Trace Event JSON: see trace.h.
 */
#include "trace.h"

/* Microseconds with nanosecond digits: 12.345 */
static void put_us(struct tbuf *b, uint64_t ns)
{
	char frac[4] = { '.', (char)('0' + ns / 100 % 10), (char)('0' + ns / 10 % 10),
			 (char)('0' + ns % 10) };

	tbuf_put_u64(b, ns / 1000);
	tbuf_put(b, frac, sizeof(frac));
}

/* ,{"ph":"X","name":"...","pid":P,"tid":T,"ts":...  : every event's head */
static void event_head(struct tbuf *b, const char *pid, char ph, const char *name,
		       uint32_t tid, uint64_t ts_ns)
{
	tbuf_put_str(b, ",{\"ph\":\"");
	tbuf_put_char(b, ph);
	tbuf_put_str(b, "\",\"name\":\"");
	tbuf_put_str(b, name);
	tbuf_put_str(b, "\",\"pid\":");
	tbuf_put_str(b, pid);
	tbuf_put_str(b, ",\"tid\":");
	tbuf_put_u64(b, tid);
	tbuf_put_str(b, ",\"ts\":");
	put_us(b, ts_ns);
}

void trace_thread_name(struct tbuf *b, const char *pid, uint32_t tid)
{
	event_head(b, pid, 'M', "thread_name", tid, 0);
	tbuf_put_str(b, ",\"args\":{\"name\":\"thread ");
	tbuf_put_u64(b, tid);
	tbuf_put_str(b, "\"}}");
	tbuf_end_line(b);
}

void trace_slice(struct tbuf *b, const char *pid, const struct trace_slice *s)
{
	event_head(b, pid, 'X', s->name, s->tid, s->start_ns);
	tbuf_put_str(b, ",\"dur\":");
	put_us(b, s->end_ns - s->start_ns);
	tbuf_put_str(b, ",\"cat\":\"segment\",\"args\":{\"invocation\":");
	tbuf_put_u64(b, s->invocation);
	tbuf_put_str(b, ",\"segment\":");
	tbuf_put_u64(b, s->segment);
	tbuf_put_str(b, s->incomplete ? ",\"incomplete\":true}" : "}");
	if (s->flow_in || s->flow_out) {
		tbuf_put_str(b, ",\"bind_id\":");
		tbuf_put_u64(b, s->track);
	}
	if (s->flow_in)
		tbuf_put_str(b, ",\"flow_in\":true");
	if (s->flow_out)
		tbuf_put_str(b, ",\"flow_out\":true");
	tbuf_put_char(b, '}');
	tbuf_end_line(b);
}

void trace_span(struct tbuf *b, const char *pid, const struct trace_span *s)
{
	uint64_t wall = s->end_ns - s->begin_ns;

	event_head(b, pid, 'b', s->name, s->begin_tid, s->begin_ns);
	tbuf_put_str(b, ",\"cat\":\"invocation\",\"id\":");
	tbuf_put_u64(b, s->track);
	tbuf_put_char(b, '}');
	tbuf_end_line(b);
	event_head(b, pid, 'e', s->name, s->end_tid, s->end_ns);
	tbuf_put_str(b, ",\"cat\":\"invocation\",\"id\":");
	tbuf_put_u64(b, s->track);
	if (s->track != s->invocation) {        /* id alone says it otherwise */
		tbuf_put_str(b, ",\"args\":{\"invocation\":");
		tbuf_put_u64(b, s->invocation);
		tbuf_put_str(b, ",\"segments\":");
	} else {
		tbuf_put_str(b, ",\"args\":{\"segments\":");
	}
	tbuf_put_u64(b, s->segments);
	tbuf_put_str(b, ",\"hops\":");
	tbuf_put_u64(b, s->hops);
	tbuf_put_str(b, ",\"active_us\":");
	put_us(b, s->active_ns);
	tbuf_put_str(b, ",\"suspended_us\":");
	put_us(b, wall > s->active_ns ? wall - s->active_ns : 0);
	tbuf_put_str(b, s->incomplete ? ",\"incomplete\":true}}" : "}}");
	tbuf_end_line(b);
}
