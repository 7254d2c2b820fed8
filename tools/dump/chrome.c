/*
 * The model as the timing plugin's trace= would have written it live: the
 * same writer (plugins/timing/trace.c), the same slices, flows, async
 * tracks and "open at exit" thread for what never ended.
 */
#include "output.h"
#include "../../plugins/timing/trace.h"

#include <stdlib.h>
#include <string.h>

/* A name escaped for a JSON string (trace.c wants them so). */
static char *json_escaped(const char *s)
{
	char *out = malloc(6 * strlen(s) + 1), *at = out;

	if (!out)
		return NULL;
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '"' || c == '\\') {
			*at++ = '\\';
			*at++ = (char)c;
		} else if (c < 0x20) {
			at += sprintf(at, "\\u%04x", c);
		} else {
			*at++ = (char)c;
		}
	}
	*at = '\0';
	return out;
}

/* TRACE_HEADER with this process's pid for %p; its leading '[' becomes
 * ',' for every process after the first. */
static void put_header(struct tbuf *b, const struct model_process *p, bool first)
{
	const char *h = TRACE_HEADER;

	if (!first) {
		tbuf_put_char(b, ',');
		h++;
	}
	for (; *h; h++) {
		if (h[0] == '%' && h[1] == 'p') {
			tbuf_put_str(b, p->pid_text);
			h++;
		} else {
			tbuf_put_char(b, *h);
		}
	}
	tbuf_end_line(b);
}

/*
 * The id of an invocation's flows and async track.  Viewers bind flows
 * across the whole trace, and the processes of one may repeat ids (a fork
 * child goes on from its parent's), so with several each gets its own
 * residue.  Kept small: viewers read JSON numbers as doubles.
 */
static uint64_t track_of(const struct model *m, const struct model_invocation *r)
{
	return m->nprocesses > 1 ? r->id * m->nprocesses + r->process : r->id;
}

static void put_invocation(struct tbuf *b, const struct model *m, uint32_t k,
			   char *const *names, bool *named)
{
	const struct model_invocation *r = &m->invocations[k];
	const char *pid = m->processes[r->process].pid_text;
	uint64_t track = track_of(m, r);
	uint32_t i;

	for (i = 0; i < r->nsegments; i++) {
		const struct model_segment *s = &m->segments[m->by_invocation[r->first_segment + i]];
		struct trace_slice slice = {
			.name = names[r->function],
			.tid = s->incomplete ? TRACE_EXIT_TID : s->thread,
			.start_ns = s->start, .end_ns = s->end,
			.invocation = r->id, .track = track, .segment = i,
			.flow_in = s->flow_in, .flow_out = s->suspends,
			.incomplete = s->incomplete,
		};

		if (!s->incomplete && !named[s->thread]) {
			named[s->thread] = true;
			trace_thread_name(b, pid, s->thread);
		}
		trace_slice(b, pid, &slice);
	}
	if (!r->complete && r->flow_pending) {
		/* a suspension's arrow must end somewhere: a mark at the end */
		struct trace_slice mark = {
			.name = names[r->function], .tid = TRACE_EXIT_TID,
			.start_ns = r->end, .end_ns = r->end,
			.invocation = r->id, .track = track, .segment = r->nsegments,
			.flow_in = true, .incomplete = true,
		};

		trace_slice(b, pid, &mark);
	}
	{
		struct trace_span span = {
			.name = names[r->function], .invocation = r->id, .track = track,
			.begin_tid = r->start_thread,
			.end_tid = r->complete ? r->end_thread : TRACE_EXIT_TID,
			.begin_ns = r->start, .end_ns = r->end,
			.segments = r->nsegments + (!r->complete && r->flow_pending),
			.hops = r->hops, .active_ns = r->active,
			.incomplete = !r->complete,
		};

		trace_span(b, pid, &span);
	}
}

bool output_chrome(const char *path, const struct model *m)
{
	struct tbuf_set *set;
	struct tbuf *b;
	char **names = calloc(m->nfunctions + 1, sizeof(*names));
	uint32_t maxthread = 0, p, k, f;
	size_t i;
	bool *named, ok = names != NULL;

	for (i = 0; i < m->nsegments; i++)
		if (m->segments[i].thread > maxthread)
			maxthread = m->segments[i].thread;
	named = calloc((size_t)maxthread + 1, sizeof(*named));
	for (f = 0; ok && f < m->nfunctions; f++)
		ok = (names[f] = json_escaped(m->functions[f].name)) != NULL;
	if (!ok || !named) {
		fprintf(stderr, "asyncelt-dump: out of memory\n");
		ok = false;
#if defined(_WIN32)
	} else if (strcmp(path, "-") == 0) {
		fprintf(stderr, "asyncelt-dump: --chrome needs --output FILE on Windows\n");
		ok = false;
#endif
	} else if (tbuf_open(&set, "--chrome", strcmp(path, "-") == 0 ? "/dev/stdout" : path,
			     TBUF_DEFAULT_CAPACITY, 0, NULL, NULL) != ELT_OK) {
		fprintf(stderr, "asyncelt-dump: %s\n", elt_last_error());
		ok = false;
	} else if (!(b = tbuf_get(set))) {
		fprintf(stderr, "asyncelt-dump: out of memory\n");
		tbuf_close(set);
		ok = false;
	} else {
		for (p = 0; p < m->nprocesses || p == 0; p++) {
			struct model_process none = { .pid_text = "0" };

			put_header(b, m->nprocesses ? &m->processes[p] : &none, p == 0);
			memset(named, 0, ((size_t)maxthread + 1) * sizeof(*named));
			for (k = 0; k < m->ninvocations; k++)
				if (m->invocations[k].process == p)
					put_invocation(b, m, k, names, named);
		}
		tbuf_put_str(b, TRACE_FOOTER);
		if (tbuf_close(set) != ELT_OK) {
			fprintf(stderr, "asyncelt-dump: %s\n", elt_last_error());
			ok = false;
		}
	}
	for (f = 0; names && f < m->nfunctions; f++)
		free(names[f]);
	free(names);
	free(named);
	return ok;
}
