/*
 * Reading a Chrome trace that timing:trace= wrote back into a model, so
 * that --svg draws live traces too.  What trace.c writes is what is read:
 * "X" slices of cat "segment" (args.invocation, args.incomplete, flow_in,
 * flow_out) and the "b"/"e" pair of cat "invocation" of each invocation
 * (args.hops on the "e").  Other events are skipped.  A trace carries no
 * parent links, so its rows are not nested.
 *
 * A small JSON reader: every value is read or skipped with its bounds
 * checked; the first malformed byte stops it with its offset.
 */
#include "output.h"
#include "../../plugins/timing/trace.h"

#include <math.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_NESTING 64

struct json {
	const char *p, *start, *end;
	char *error;
	size_t error_size;
	bool failed;
};

/* The fields of one event that matter here. */
struct event {
	char ph;
	char name[256];
	char cat[16];
	long pid;
	double tid, ts, dur, id, invocation, hops;
	bool incomplete, flow_in, flow_out;
};

static bool bad(struct json *j, const char *what)
{
	if (!j->failed)
		snprintf(j->error, j->error_size, "offset %zu: %s", (size_t)(j->p - j->start),
			 what);
	j->failed = true;
	return false;
}

static void skip_space(struct json *j)
{
	while (j->p < j->end && (*j->p == ' ' || *j->p == '\n' || *j->p == '\r' || *j->p == '\t'))
		j->p++;
}

static bool expect(struct json *j, char c)
{
	skip_space(j);
	if (j->p >= j->end || *j->p != c) {
		char what[48];

		snprintf(what, sizeof(what), "expected '%c'", c);
		return bad(j, what);
	}
	j->p++;
	return true;
}

/* A string into out (cut to size, escapes decoded, \u as '?' beyond ASCII). */
/* A JSON number as an integer: out of range, negative or not a number
 * (the file is not ours to trust) gives 0, never undefined behaviour. */
static long as_long(double v)
{
	return v > (double)LONG_MIN && v < (double)LONG_MAX ? (long)v : 0;
}

static uint64_t as_u64(double v)
{
	return v >= 0 && v < 1.8e19 ? (uint64_t)v : 0;
}

static bool read_string(struct json *j, char *out, size_t size)
{
	size_t n = 0;

	if (!expect(j, '"'))
		return false;
	while (j->p < j->end && *j->p != '"') {
		char c = *j->p++;

		if ((unsigned char)c < 0x20)
			return bad(j, "control character in a string");
		if (c == '\\') {
			if (j->p >= j->end)
				break;
			c = *j->p++;
			switch (c) {
			case 'n': c = '\n'; break;
			case 't': c = '\t'; break;
			case 'r': c = '\r'; break;
			case 'b': c = '\b'; break;
			case 'f': c = '\f'; break;
			case 'u': {
				unsigned v = 0, k;

				for (k = 0; k < 4; k++, j->p++) {
					char h = j->p < j->end ? *j->p : 0;

					if (h >= '0' && h <= '9')
						v = v * 16 + (unsigned)(h - '0');
					else if ((h | 0x20) >= 'a' && (h | 0x20) <= 'f')
						v = v * 16 + (unsigned)((h | 0x20) - 'a' + 10);
					else
						return bad(j, "bad \\u escape");
				}
				c = v >= 0x20 && v < 0x7f ? (char)v : '?';
				break;
			}
			case '"': case '\\': case '/':
				break;
			default:
				return bad(j, "unknown escape in a string");
			}
		}
		if (out && n + 1 < size)
			out[n++] = c;
	}
	if (out && size)
		out[n] = '\0';
	if (j->p >= j->end)
		return bad(j, "unterminated string");
	j->p++;
	return true;
}

static bool read_number(struct json *j, double *out)
{
	char *stop;
	char text[64];
	size_t n = 0;

	skip_space(j);
	while (j->p + n < j->end && n + 1 < sizeof(text) && j->p[n] &&
	       strchr("+-0123456789.eE", j->p[n]))
		n++;
	memcpy(text, j->p, n);
	text[n] = '\0';
	*out = strtod(text, &stop);
	if (n == 0 || stop != text + n || !isfinite(*out))
		return bad(j, "expected a number");
	j->p += n;
	return true;
}

static bool skip_value(struct json *j, int depth);

static bool skip_container(struct json *j, char close, int depth)
{
	bool object = close == '}';

	j->p++;
	skip_space(j);
	if (j->p < j->end && *j->p == close) {
		j->p++;
		return true;
	}
	for (;;) {
		if (object && (!read_string(j, NULL, 0) || !expect(j, ':')))
			return false;
		if (!skip_value(j, depth + 1))
			return false;
		skip_space(j);
		if (j->p < j->end && *j->p == ',') {
			j->p++;
			continue;
		}
		return expect(j, close);
	}
}

static bool skip_value(struct json *j, int depth)
{
	double number;

	if (depth > MAX_NESTING)
		return bad(j, "nested too deeply");
	skip_space(j);
	if (j->p >= j->end)
		return bad(j, "the text ends where a value should be");
	switch (*j->p) {
	case '{': return skip_container(j, '}', depth);
	case '[': return skip_container(j, ']', depth);
	case '"': return read_string(j, NULL, 0);
	case 't':
	case 'f':
	case 'n': {
		static const char *const words[] = { "true", "false", "null" };
		int w;

		for (w = 0; w < 3; w++)
			if ((size_t)(j->end - j->p) >= strlen(words[w]) &&
			    memcmp(j->p, words[w], strlen(words[w])) == 0) {
				j->p += strlen(words[w]);
				return true;
			}
		return bad(j, "unknown word");
	}
	default:
		return read_number(j, &number);
	}
}

static bool read_bool(struct json *j, bool *out)
{
	skip_space(j);
	*out = (size_t)(j->end - j->p) >= 4 && memcmp(j->p, "true", 4) == 0;
	return skip_value(j, 1);
}

/* The members of an object, each handed to `member`. */
static bool read_object(struct json *j, struct event *e, bool args)
{
	if (!expect(j, '{'))
		return false;
	skip_space(j);
	if (j->p < j->end && *j->p == '}') {
		j->p++;
		return true;
	}
	for (;;) {
		char key[32], ph[4];
		double pid;
		bool ok;

		if (!read_string(j, key, sizeof(key)) || !expect(j, ':'))
			return false;
		skip_space(j);
		if (!args && !strcmp(key, "ph"))
			ok = read_string(j, ph, sizeof(ph)) && ((e->ph = ph[0]), true);
		else if (!args && !strcmp(key, "name"))
			ok = read_string(j, e->name, sizeof(e->name));
		else if (!args && !strcmp(key, "cat"))
			ok = read_string(j, e->cat, sizeof(e->cat));
		else if (!args && !strcmp(key, "pid") && j->p < j->end && *j->p != '"')
			ok = read_number(j, &pid) && ((e->pid = as_long(pid)), true);
		else if (!args && !strcmp(key, "tid") && j->p < j->end && *j->p != '"')
			ok = read_number(j, &e->tid);
		else if (!args && !strcmp(key, "ts"))
			ok = read_number(j, &e->ts);
		else if (!args && !strcmp(key, "dur"))
			ok = read_number(j, &e->dur);
		else if (!args && !strcmp(key, "id") && j->p < j->end && *j->p != '"')
			ok = read_number(j, &e->id);
		else if (!args && !strcmp(key, "flow_in"))
			ok = read_bool(j, &e->flow_in);
		else if (!args && !strcmp(key, "flow_out"))
			ok = read_bool(j, &e->flow_out);
		else if (!args && !strcmp(key, "args") && j->p < j->end && *j->p == '{')
			ok = read_object(j, e, true);
		else if (args && !strcmp(key, "invocation"))
			ok = read_number(j, &e->invocation);
		else if (args && !strcmp(key, "hops"))
			ok = read_number(j, &e->hops);
		else if (args && !strcmp(key, "incomplete"))
			ok = read_bool(j, &e->incomplete);
		else
			ok = skip_value(j, 1);
		if (!ok)
			return false;
		skip_space(j);
		if (j->p < j->end && *j->p == ',') {
			j->p++;
			continue;
		}
		return expect(j, '}');
	}
}

static uint64_t ns_of(double us)
{
	return us <= 0 ? 0 : us >= 1.8e13 ? UINT64_MAX / 2 : (uint64_t)llround(us * 1000.0);
}

/* (pid, invocation id) -> model invocation: a linear-probing table. */
struct ids {
	uint64_t *keys;
	uint32_t *values;
	size_t mask;
};

static uint32_t *slot(struct ids *t, uint64_t key)
{
	size_t i = (size_t)((key * 0x9e3779b97f4a7c15ull) >> 20) & t->mask;

	while (t->keys[i] && t->keys[i] != key)
		i = (i + 1) & t->mask;
	t->keys[i] = key;
	return &t->values[i];
}

static bool add_event(struct model *m, struct ids *ids, const struct event *e)
{
	uint32_t process, *index;
	struct model_invocation *r;
	uint64_t key;

	if (!(e->ph == 'X' && !strcmp(e->cat, "segment")) &&
	    !((e->ph == 'b' || e->ph == 'e') && !strcmp(e->cat, "invocation")))
		return true;
	process = model_process(m, e->pid);
	if (process == MODEL_NONE)
		return false;
	/* never 0 (a free slot); ids past 2^48 may share a slot's key */
	key = as_u64(e->ph == 'X' ? e->invocation : e->id) * 65536u + process + 1;
	index = slot(ids, key);
	if (!*index) {
		struct model_invocation fresh = {
			.id = as_u64(e->ph == 'X' ? e->invocation : e->id),
			.process = process, .function = model_function(m, e->name),
			.parent = MODEL_NONE, .start = UINT64_MAX,
		};

		if (fresh.function == MODEL_NONE)
			return false;
		*index = model_add_invocation(m, &fresh) + 1;
		if (*index == 0)
			return false;
		m->functions[fresh.function].calls++;
	}
	r = &m->invocations[*index - 1];
	if (e->ph == 'X') {
		struct model_segment s = {
			.start = ns_of(e->ts), .end = ns_of(e->ts) + ns_of(e->dur),
			.thread = e->tid >= 0 && e->tid <= UINT32_MAX ? (uint32_t)e->tid : 0,
			.invocation = *index - 1, .suspends = e->flow_out,
			.flow_in = e->flow_in, .incomplete = e->incomplete,
		};

		if (s.start < r->start) {
			r->start = s.start;
			r->start_thread = s.thread;
		}
		if (s.end >= r->end) {
			r->end = s.end;
			r->end_thread = s.thread;
		}
		r->active += s.end - s.start;
		m->functions[r->function].segments++;
		if (s.end > m->end)
			m->end = s.end;
		return model_add_segment(m, &s);
	}
	if (e->ph == 'b') {
		r->start = ns_of(e->ts);
	} else {
		r->end = ns_of(e->ts);
		r->complete = !e->incomplete;
		r->hops = e->hops >= 0 && e->hops <= UINT32_MAX ? (uint32_t)e->hops : 0;
		if (r->end > m->end)
			m->end = r->end;
	}
	return true;
}

bool model_from_chrome_trace(struct model *m, const char *text, size_t size,
			     char *error, size_t error_size)
{
	struct json j = { text, text, text + size, error, error_size, false };
	struct ids ids = { 0 };
	size_t cap = 1024, k;
	bool ok = true;

	memset(m, 0, sizeof(*m));
	while (cap < size / 8)
		cap *= 2;
	ids.mask = cap - 1;
	ids.keys = calloc(cap, sizeof(*ids.keys));
	ids.values = calloc(cap, sizeof(*ids.values));
	if (!ids.keys || !ids.values) {
		snprintf(error, error_size, "out of memory");
		ok = false;
	}
	skip_space(&j);
	if (ok && j.p < j.end && *j.p == '{') {
		/* {"traceEvents": [...], ...}: the other members are skipped */
		char key[32] = "";

		j.p++;
		while (ok && strcmp(key, "traceEvents") != 0) {
			ok = read_string(&j, key, sizeof(key)) && expect(&j, ':');
			if (ok && strcmp(key, "traceEvents") != 0)
				ok = skip_value(&j, 1) && expect(&j, ',');
		}
	}
	ok = ok && expect(&j, '[');
	skip_space(&j);
	if (ok && j.p < j.end && *j.p == ']')
		j.p++;
	else
		while (ok) {
			struct event e;

			memset(&e, 0, sizeof(e));
			ok = read_object(&j, &e, false);
			/* one entry per trace event at most: the table stays half empty */
			if (ok && m->ninvocations + 1 > (ids.mask + 1) / 2) {
				snprintf(error, error_size, "more invocations than %zu events can hold",
					 size / 16);
				ok = false;
				break;
			}
			ok = ok && add_event(m, &ids, &e);
			if (!ok && !j.failed)
				snprintf(error, error_size, "out of memory");
			skip_space(&j);
			if (ok && j.p < j.end && *j.p == ',') {
				j.p++;
				continue;
			}
			ok = ok && expect(&j, ']');
			break;
		}
	for (k = 0; ok && k < m->ninvocations; k++)
		if (m->invocations[k].start == UINT64_MAX)      /* an e without b or slices */
			m->invocations[k].start = m->invocations[k].end;
	ok = ok && model_finish(m);
	free(ids.keys);
	free(ids.values);
	if (!ok)
		model_free(m);
	return ok;
}
