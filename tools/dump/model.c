/*
 * Stitching records into invocations: see model.h.  The records of all
 * files are visited in time order (a thread's own records keep their file
 * order at equal times), as the timing plugin would have seen them live.
 */
#include "model.h"
#include "grow.h"
#include "read.h"
#include "../../plugins/logging/recording.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* --- (process, invocation id) -> invocation index ------------------------- */

struct id_map {
	uint64_t *keys;                 /* id; 0 is free (ids are non-zero) */
	uint32_t *processes, *values;
	size_t mask, used;
};

static size_t slot_of(uint64_t id, uint32_t process, size_t mask)
{
	uint64_t h = (id ^ ((uint64_t)process << 40)) * 0x9e3779b97f4a7c15ull;

	return (size_t)(h >> 32) & mask;
}

static bool map_init(struct id_map *map, size_t expected)
{
	size_t size = 1024;

	while (size < 2 * expected)
		size *= 2;
	map->mask = size - 1;
	map->used = 0;
	map->keys = calloc(size, sizeof(*map->keys));
	map->processes = calloc(size, sizeof(*map->processes));
	map->values = calloc(size, sizeof(*map->values));
	return map->keys && map->processes && map->values;
}

static void map_free(struct id_map *map)
{
	free(map->keys);
	free(map->processes);
	free(map->values);
}

static uint32_t map_get(const struct id_map *map, uint64_t id, uint32_t process)
{
	size_t i;

	for (i = slot_of(id, process, map->mask); map->keys[i]; i = (i + 1) & map->mask)
		if (map->keys[i] == id && map->processes[i] == process)
			return map->values[i];
	return MODEL_NONE;
}

/* Later puts of a key replace its value (an orphan resume re-using an id). */
static void map_put(struct id_map *map, uint64_t id, uint32_t process, uint32_t value)
{
	size_t i;

	for (i = slot_of(id, process, map->mask); map->keys[i]; i = (i + 1) & map->mask)
		if (map->keys[i] == id && map->processes[i] == process)
			break;
	map->keys[i] = id;
	map->processes[i] = process;
	map->values[i] = value;
}

/* --- building --------------------------------------------------------------- */

uint32_t model_function(struct model *m, const char *name)
{
	size_t cap = m->nfunctions;     /* grows by one: functions are few */
	struct model_function *bigger;
	uint32_t i;

	for (i = 0; i < m->nfunctions; i++)
		if (strcmp(m->functions[i].name, name) == 0)
			return i;
	bigger = realloc(m->functions, (cap + 1) * sizeof(*bigger));
	if (!bigger)
		return MODEL_NONE;
	m->functions = bigger;
	memset(&bigger[i], 0, sizeof(*bigger));
	bigger[i].name = strdup(name);
	if (!bigger[i].name)
		return MODEL_NONE;
	return m->nfunctions++;
}

uint32_t model_process(struct model *m, long pid)
{
	struct model_process *bigger;
	uint32_t i;

	for (i = 0; i < m->nprocesses; i++)
		if (m->processes[i].pid == pid)
			return i;
	bigger = realloc(m->processes, (m->nprocesses + 1) * sizeof(*bigger));
	if (!bigger)
		return MODEL_NONE;
	m->processes = bigger;
	memset(&bigger[i], 0, sizeof(*bigger));
	bigger[i].pid = pid;
	snprintf(bigger[i].pid_text, sizeof(bigger[i].pid_text), "%ld", pid);
	return m->nprocesses++;
}

uint32_t model_add_invocation(struct model *m, const struct model_invocation *inv)
{
	if (m->ninvocations == MODEL_NONE - 1 ||
	    !dump_grow((void **)&m->invocations, &m->capacity_invocations,
		       m->ninvocations + 1, sizeof(*inv)))
		return MODEL_NONE;
	m->invocations[m->ninvocations] = *inv;
	return m->ninvocations++;
}

bool model_add_segment(struct model *m, const struct model_segment *s)
{
	if (!dump_grow((void **)&m->segments, &m->capacity_segments, m->nsegments + 1,
		       sizeof(*s)))
		return false;
	m->segments[m->nsegments++] = *s;
	return true;
}

static bool add_latency(struct model_function *f, uint64_t ns)
{
	if (!dump_grow((void **)&f->latencies, &f->latencies_cap, f->nlatencies + 1,
		       sizeof(*f->latencies)))
		return false;
	f->latencies[f->nlatencies++] = ns;
	return true;
}

/* One record, in time order.  `open` holds, per invocation, the index of
 * its running segment (MODEL_NONE when suspended), `suspended_at` when
 * its last suspension began. */
struct walk {
	struct model *m;
	struct id_map ids;
	uint32_t *open;
	uint64_t *suspended_at;
	size_t open_cap, suspended_cap;
};

static bool begin_segment(struct walk *w, uint32_t inv, uint64_t now, uint32_t thread,
			  bool flow_in)
{
	struct model_segment s = {
		.start = now, .end = now, .thread = thread, .invocation = inv,
		.flow_in = flow_in,
	};

	w->open[inv] = (uint32_t)w->m->nsegments;
	w->m->invocations[inv].running = true;
	w->m->invocations[inv].end_thread = thread;
	w->m->functions[w->m->invocations[inv].function].segments++;
	return model_add_segment(w->m, &s);
}

static bool visit(struct walk *w, uint32_t process, uint32_t function,
		  const struct dump_event *e, uint64_t now)
{
	struct model *m = w->m;
	uint32_t inv = map_get(&w->ids, e->invocation, process);
	struct model_invocation *r;

	if (e->flags & REC_NO_INVOCATION)
		return true;    /* the library could not place it: nothing to draw */
	if (e->kind == REC_CALL || (e->kind == REC_RESUME && inv == MODEL_NONE)) {
		/* an initial call, or a resume of something never seen calling */
		struct model_invocation fresh = {
			.id = e->invocation, .process = process,
			.function = function,
			.parent_id = e->kind == REC_CALL ? e->parent_or_continuation : 0,
			.parent = MODEL_NONE, .start = now, .start_thread = e->thread,
			.called = e->kind == REC_CALL,
		};

		inv = model_add_invocation(m, &fresh);
		if (inv == MODEL_NONE ||
		    !dump_grow((void **)&w->open, &w->open_cap, (size_t)inv + 1, sizeof(*w->open)) ||
		    !dump_grow((void **)&w->suspended_at, &w->suspended_cap, (size_t)inv + 1,
			       sizeof(*w->suspended_at)))
			return false;
		if (2 * (w->ids.used + 1) > w->ids.mask + 1) {
			/* keep the map at most half full: rebuild it bigger */
			struct id_map bigger;
			uint32_t i;

			if (!map_init(&bigger, 2 * (w->ids.used + 1)))
				return false;
			for (i = 0; i < inv; i++)
				map_put(&bigger, m->invocations[i].id, m->invocations[i].process, i);
			bigger.used = w->ids.used;
			map_free(&w->ids);
			w->ids = bigger;
		}
		map_put(&w->ids, e->invocation, process, inv);
		w->ids.used++;
		m->functions[fresh.function].calls += fresh.called;
		return begin_segment(w, inv, now, e->thread, false);
	}
	if (inv == MODEL_NONE)
		return true;    /* began before the recording: cannot be placed */
	r = &m->invocations[inv];
	if (e->kind == REC_RESUME) {
		bool seen_suspending = !r->running && r->flow_pending;

		if (w->open[inv] != MODEL_NONE)
			return true;    /* resumed while running: a record is lost */
		if (seen_suspending &&
		    !add_latency(&m->functions[r->function], now - w->suspended_at[inv]))
			return false;
		r->hops += e->thread != e->previous_thread;
		r->flow_pending = false;
		return begin_segment(w, inv, now, e->thread, seen_suspending);
	}
	/* the end of a segment: a suspension, a final return, a tail call */
	if (!r->running || w->open[inv] == MODEL_NONE)
		return true;
	m->segments[w->open[inv]].end = now;
	m->segments[w->open[inv]].suspends = e->kind == REC_SUSPEND;
	r->active += now - m->segments[w->open[inv]].start;
	w->open[inv] = MODEL_NONE;
	r->running = false;
	r->end = now;
	r->end_thread = e->thread;
	if (e->kind == REC_SUSPEND) {
		r->flow_pending = true;
		w->suspended_at[inv] = now;
	} else {
		r->complete = true;
	}
	return true;
}

bool model_from_recordings(struct model *m, const struct dump_file *files, size_t n)
{
	struct walk w = { .m = m };
	uint32_t **functions = calloc(n ? n : 1, sizeof(*functions));
	uint32_t *process = calloc(n ? n : 1, sizeof(*process));
	size_t total = 0, i, k;
	struct dump_ref *refs = NULL;
	bool ok = functions && process;

	memset(m, 0, sizeof(*m));
	/* each file's function indexes -> the model's (merged by name) */
	for (i = 0; ok && i < n; i++) {
		const struct dump_file *f = &files[i];
		uint32_t j;

		process[i] = model_process(m, f->pid);
		functions[i] = calloc((size_t)f->nfunctions + 1, sizeof(uint32_t));
		ok = process[i] != MODEL_NONE && functions[i];
		for (j = 0; ok && j < f->nfunctions; j++)
			functions[i][j] = f->functions[j].defined
					  ? model_function(m, f->functions[j].name) : MODEL_NONE;
	}
	refs = ok ? dump_order(files, n, &total) : NULL;
	ok = ok && refs && map_init(&w.ids, total / 4);
	for (k = 0; ok && k < total; k++) {
		const struct dump_file *f = &files[refs[k].file];
		const struct dump_event *e = &f->events[refs[k].index];
		uint32_t fn = e->function < f->nfunctions ? functions[refs[k].file][e->function]
				: MODEL_NONE;

		if (fn == MODEL_NONE) {
			/* undefined (or unregistered): a function named after its index */
			char name[32];

			fn = model_function(m, dump_function_name(f, e->function, name,
								  sizeof(name)));
			if (fn == MODEL_NONE) {
				ok = false;
				break;
			}
		}
		ok = visit(&w, process[refs[k].file], fn, e, refs[k].time);
		if (refs[k].time > m->processes[process[refs[k].file]].end)
			m->processes[process[refs[k].file]].end = refs[k].time;
		if (refs[k].time > m->end)
			m->end = refs[k].time;
	}
	/* what is still running ends at its process's last event, incomplete */
	for (k = 0; ok && k < m->ninvocations; k++) {
		struct model_invocation *r = &m->invocations[k];
		uint64_t end = m->processes[r->process].end;

		if (r->running) {
			struct model_segment *s = &m->segments[w.open[k]];

			s->end = end;
			s->incomplete = true;
			r->active += end - s->start;
		}
		if (!r->complete)
			r->end = end;
	}
	ok = ok && model_finish(m);
	for (i = 0; functions && i < n; i++)
		free(functions[i]);
	free(functions);
	free(process);
	free(refs);
	free(w.open);
	free(w.suspended_at);
	if (w.ids.keys || w.ids.processes || w.ids.values)
		map_free(&w.ids);
	return ok;
}

/* --- finishing ---------------------------------------------------------------- */

static int by_start(const void *a, const void *b)
{
	const struct model_segment *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	if (x->thread != y->thread)
		return x->thread < y->thread ? -1 : 1;
	return x->invocation < y->invocation ? -1 : x->invocation > y->invocation;
}

bool model_finish(struct model *m)
{
	struct id_map ids;
	size_t i;
	uint32_t k;

	if (m->nsegments)       /* none: m->segments may be NULL */
		qsort(m->segments, m->nsegments, sizeof(*m->segments), by_start);
	free(m->by_invocation);
	m->by_invocation = malloc((m->nsegments ? m->nsegments : 1) * sizeof(uint32_t));
	if (!m->by_invocation)
		return false;
	/* counting sort: each invocation's segments together, in start order */
	for (k = 0; k < m->ninvocations; k++)
		m->invocations[k].nsegments = 0;
	for (i = 0; i < m->nsegments; i++)
		m->invocations[m->segments[i].invocation].nsegments++;
	for (k = 0, i = 0; k < m->ninvocations; k++) {
		m->invocations[k].first_segment = (uint32_t)i;
		i += m->invocations[k].nsegments;
		m->invocations[k].nsegments = 0;
	}
	for (i = 0; i < m->nsegments; i++) {
		struct model_invocation *r = &m->invocations[m->segments[i].invocation];

		m->by_invocation[r->first_segment + r->nsegments++] = (uint32_t)i;
	}
	/* parents, by id within the process */
	if (!map_init(&ids, m->ninvocations))
		return false;
	for (k = 0; k < m->ninvocations; k++)
		map_put(&ids, m->invocations[k].id, m->invocations[k].process, k);
	for (k = 0; k < m->ninvocations; k++) {
		struct model_invocation *r = &m->invocations[k];

		r->parent = r->parent_id ? map_get(&ids, r->parent_id, r->process) : MODEL_NONE;
		if (r->parent == k)
			r->parent = MODEL_NONE;
	}
	map_free(&ids);
	return true;
}

void model_free(struct model *m)
{
	uint32_t i;

	for (i = 0; i < m->nfunctions; i++) {
		free(m->functions[i].name);
		free(m->functions[i].latencies);
	}
	free(m->functions);
	free(m->processes);
	free(m->invocations);
	free(m->segments);
	free(m->by_invocation);
	memset(m, 0, sizeof(*m));
}
