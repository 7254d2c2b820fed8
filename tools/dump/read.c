/*
 * Reading a binary recording: see read.h.  Every length is checked
 * against what is left before it is used; the first malformed record stops
 * the reading with its offset, a record cut short by the end of the file
 * ends it with a warning.
 */
#include "read.h"
#include "grow.h"
#include "../../plugins/logging/recording.h"

#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct cursor {
	const uint8_t *data;
	size_t size, at;
};

static bool take(struct cursor *c, void *dst, size_t n)
{
	if (n > c->size - c->at)
		return false;
	memcpy(dst, c->data + c->at, n);
	c->at += n;
	return true;
}

/* What taking a number gave: it, the end of the file first, or bytes
 * that are no number. */
enum number { NUMBER, NUMBER_CUT, NUMBER_BAD };

static enum number take_number(struct cursor *c, uint64_t *v)
{
	unsigned shift;

	*v = 0;
	for (shift = 0; shift < 7 * REC_NUMBER_MAX; shift += 7) {
		uint8_t byte;

		if (c->at == c->size)
			return NUMBER_CUT;
		byte = c->data[c->at++];
		if (shift == 63 && byte > 1)
			return NUMBER_BAD;      /* more than 64 bits */
		*v |= (uint64_t)(byte & 0x7f) << shift;
		if (!(byte & 0x80))
			return NUMBER;
	}
	return NUMBER_BAD;
}

static elt_status fail(char *error, size_t size, const char *name, size_t offset,
		       const char *fmt, ...)
{
	va_list ap;
	int n = snprintf(error, size, "%s: offset %zu: ", name, offset);

	va_start(ap, fmt);
	if (n >= 0 && (size_t)n < size)
		vsnprintf(error + n, size - (size_t)n, fmt, ap);
	va_end(ap);
	return ELT_E_INVALID_ARGUMENT;
}

/* --- the preamble ---------------------------------------------------------- */

/* A preamble line "KEY DIGITS" with a value from min to max: true, the
 * value in *v.  False when the line is another key's.  *bad when it is
 * this key's with no such number (not digits, out of the range). */
static bool preamble_number(const char *line, const char *key, uint64_t min,
			    uint64_t max, uint64_t *v, bool *bad)
{
	size_t key_len = strlen(key);
	const char *p = line + key_len + 1;

	if (strncmp(line, key, key_len) != 0 || line[key_len] != ' ')
		return false;
	*v = 0;
	*bad = !*p || strspn(p, "0123456789") != strlen(p);
	for (; !*bad && *p; p++) {
		if (*v > (max - (uint64_t)(*p - '0')) / 10)
			*bad = true;
		*v = *v * 10 + (uint64_t)(*p - '0');
	}
	*bad = *bad || *v < min;
	return true;
}

static elt_status parse_preamble(struct cursor *c, struct dump_file *f, char *error,
				 size_t error_size)
{
	const char *text = (const char *)c->data;
	size_t limit = c->size < REC_PREAMBLE_MAX ? c->size : REC_PREAMBLE_MAX;
	size_t magic_len = strlen(REC_MAGIC);
	bool have_base = false, have_clock = false;
	size_t at = 0;
	int version = 0;
	char version_text[24] = "";     /* as written: said when refused */
	uint64_t number;
	bool bad_number;

	if (c->size < magic_len || memcmp(text, REC_MAGIC, magic_len) != 0)
		return fail(error, error_size, f->name, 0,
			    "not a binary recording (no \"" REC_MAGIC "\" at the start; "
			    "write one with logging:format=binary)");
	while (at < limit) {
		const char *line = text + at;
		const char *nl = memchr(line, '\n', limit - at);
		char value[128];
		size_t len;

		if (!nl)
			break;
		len = (size_t)(nl - line);
		at += len + 1;
		if (len + 1 == strlen(REC_PREAMBLE_END) &&
		    memcmp(line, REC_PREAMBLE_END, len) == 0) {
			if (version < REC_VERSION_OLDEST || version > REC_VERSION)
				return fail(error, error_size, f->name, 0,
					    "format version %s; this reader reads versions "
					    "%d to %d", version_text, REC_VERSION_OLDEST,
					    REC_VERSION);
			f->version = version;
			if (!have_base || !have_clock)
				return fail(error, error_size, f->name, at,
					    "the preamble lacks its %s line",
					    have_base ? "clock" : "base");
			c->at = at;
			return ELT_OK;
		}
		if (len >= sizeof(value))
			return fail(error, error_size, f->name, (size_t)(line - text),
				    "preamble line longer than %zu bytes", sizeof(value) - 1);
		memcpy(value, line, len);
		value[len] = '\0';
		if (strncmp(value, REC_MAGIC " ", magic_len + 1) == 0) {
			const char *v = value + magic_len + 1;

			/* digits only, and no more than a version can have */
			snprintf(version_text, sizeof(version_text), "\"%.20s\"", v);
			version = strspn(v, "0123456789") == strlen(v) && *v && strlen(v) <= 6
				  ? atoi(v) : -1;
			continue;
		}
		if (preamble_number(value, "pid", 1, LONG_MAX, &number, &bad_number)) {
			if (bad_number)
				return fail(error, error_size, f->name, (size_t)(line - text),
					    "\"%s\": no pid", value);
			f->pid = (long)number;
			continue;
		}
		if (strncmp(value, "abi ", 4) == 0) {
			snprintf(f->abi, sizeof(f->abi), "%s", value + 4);
			continue;
		}
		if (strncmp(value, "byte-order ", 11) == 0) {
			/* only value bytes are in it: the reader formats them
			 * on the writer's ABI alone */
			if (strcmp(value + 11, "little") != 0 && strcmp(value + 11, "big") != 0)
				return fail(error, error_size, f->name, (size_t)(line - text),
					    "unknown byte order \"%s\"", value + 11);
			continue;
		}
		if (strncmp(value, "clock ", 6) == 0) {
			size_t i;

			for (i = 0; i < REC_CLOCK_COUNT; i++)
				if (strcmp(value + 6, rec_clocks[i][1]) == 0)
					break;
			if (i == REC_CLOCK_COUNT)
				return fail(error, error_size, f->name, (size_t)(line - text),
					    "unknown clock \"%s\"", value + 6);
			have_clock = true;
			continue;
		}
		if (preamble_number(value, "base", 0, UINT64_MAX, &f->base_ns, &bad_number)) {
			if (bad_number)
				return fail(error, error_size, f->name, (size_t)(line - text),
					    "\"%s\": no time in nanoseconds", value);
			have_base = true;
			continue;
		}
		if (preamble_number(value, "buffer", 1, UINT64_MAX, &f->buffer, &bad_number)) {
			if (bad_number)
				return fail(error, error_size, f->name, (size_t)(line - text),
					    "\"%s\": no buffer size", value);
			continue;
		}
		/* other keys: a later writer's, ignored */
	}
	if (limit == c->size)
		return fail(error, error_size, f->name, c->size,
			    "the preamble is cut short (no \"records\" line)");
	return fail(error, error_size, f->name, 0, "the preamble has no \"records\" line "
		    "in its first %d bytes", REC_PREAMBLE_MAX);
}

/* --- records --------------------------------------------------------------- */

/* The smallest function record: tag, three numbers, two empty strings
 * and the end byte. */
#define FUNCTION_RECORD_MIN 7

/* The reading of the records: where it is, the thread run it is in. */
struct reader {
	struct cursor c;
	struct dump_file *f;
	size_t offset;                  /* of the record being read */
	size_t events_cap, functions_cap, unregistered_cap;
	uint64_t unregistered_id;       /* the event's, with REC_UNREGISTERED */
	bool in_run;
	uint32_t thread;
	uint64_t time, invocation;
	char *error;
	size_t error_size;
};

/* The outcome of reading one record. */
enum step { STEP_OK, STEP_CUT, STEP_FAILED };

static enum step bad(struct reader *r, const char *fmt, const char *what)
{
	fail(r->error, r->error_size, r->f->name, r->offset, fmt, what);
	return STEP_FAILED;
}

/* A number into v, which must be at most max. */
static enum step number(struct reader *r, uint64_t *v, uint64_t max, const char *what)
{
	switch (take_number(&r->c, v)) {
	case NUMBER_CUT:
		return STEP_CUT;
	case NUMBER_BAD:
		return bad(r, "%s: not a number (more than 64 bits)", what);
	default:
		return *v <= max ? STEP_OK : bad(r, "%s: out of range", what);
	}
}

#define NUMBER_OR_RETURN(r, v, max, what) do {                         \
		enum step step_ = number(r, v, max, what);              \
		if (step_ != STEP_OK)                                   \
			return step_;                                   \
	} while (0)

static enum step define(struct reader *r)
{
	struct dump_file *f = r->f;
	uint64_t index, id, flags;
	const char *name, *sig, *end;
	struct dump_function *fn;

	NUMBER_OR_RETURN(r, &index, UINT32_MAX, "function index");
	NUMBER_OR_RETURN(r, &id, UINT64_MAX, "function id");
	NUMBER_OR_RETURN(r, &flags, UINT32_MAX, "function flags");
	name = (const char *)r->c.data + r->c.at;
	end = (const char *)r->c.data + r->c.size;
	sig = memchr(name, '\0', (size_t)(end - name));
	if (!sig || !memchr(sig + 1, '\0', (size_t)(end - sig - 1)))
		return STEP_CUT;
	r->c.at = (size_t)((const uint8_t *)memchr(sig + 1, '\0', (size_t)(end - sig - 1)) -
			   r->c.data) + 1;
	/* every function before it has a record too (the writer defines each
	 * one): an index beyond what the file could hold is damage, and would
	 * make the table huge */
	if (index >= REC_FUNCTIONS_MAX ||
	    index > r->c.size / FUNCTION_RECORD_MIN) {
		fail(r->error, r->error_size, f->name, r->offset,
		     "function index %" PRIu64 ": more functions than a %zu-byte file holds",
		     index, r->c.size);
		return STEP_FAILED;
	}
	if (!dump_grow((void **)&f->functions, &r->functions_cap, (size_t)index + 1,
		       sizeof(*f->functions)))
		return bad(r, "%s", "out of memory");
	while (f->nfunctions <= index)
		memset(&f->functions[f->nfunctions++], 0, sizeof(*fn));
	fn = &f->functions[index];
	if (fn->defined && strcmp(fn->name, name) != 0) {
		fail(r->error, r->error_size, f->name, r->offset,
		     "function %" PRIu64 " defined twice, as \"%s\" and \"%s\"",
		     index, fn->name, name);
		return STEP_FAILED;
	}
	fn->defined = true;
	fn->flags = (uint32_t)flags;
	fn->id = id;
	fn->name = name;
	fn->signature_text = sig + 1;
	return STEP_OK;
}

static enum step start_run(struct reader *r)
{
	uint64_t thread;

	NUMBER_OR_RETURN(r, &thread, UINT32_MAX, "run thread");
	NUMBER_OR_RETURN(r, &r->time, UINT64_MAX, "run time");
	r->thread = (uint32_t)thread;
	r->invocation = 0;
	r->in_run = true;
	return STEP_OK;
}

/* An event into e, its time and invocation from the run's. */
static enum step event(struct reader *r, struct dump_event *e)
{
	uint64_t v;

	if (!r->in_run)
		return bad(r, "%s", "an event before any run record (not a recording?)");
	if ((e->flags & REC_VALUE) && e->kind != REC_CALL && e->kind != REC_RETURN) {
		fail(r->error, r->error_size, r->f->name, r->offset,
		     "a %s record cannot carry a value",
		     elt_segment_kind_name((elt_segment_kind)e->kind));
		return STEP_FAILED;
	}
	NUMBER_OR_RETURN(r, &v, UINT64_MAX, "time");
	e->time = r->time += v;
	NUMBER_OR_RETURN(r, &v, REC_FUNCTIONS_MAX, "function");
	e->function = v ? (uint32_t)(v - 1) : REC_UNREGISTERED;
	if (!v && r->f->version >= 3)
		NUMBER_OR_RETURN(r, &r->unregistered_id, UINT64_MAX, "function id");
	e->thread = r->thread;
	if (!(e->flags & REC_NO_INVOCATION)) {
		NUMBER_OR_RETURN(r, &v, UINT64_MAX, "invocation");
		e->invocation = r->invocation += rec_unzigzag(v);
	}
	switch (e->kind) {
	case REC_CALL:
		NUMBER_OR_RETURN(r, &v, UINT64_MAX, "parent");
		e->parent_or_continuation = v ? e->invocation - rec_unzigzag(v - 1) : 0;
		break;
	case REC_RESUME:
		NUMBER_OR_RETURN(r, &e->parent_or_continuation, UINT64_MAX, "continuation");
		NUMBER_OR_RETURN(r, &v, UINT32_MAX, "segment");
		e->segment = (uint32_t)v;
		NUMBER_OR_RETURN(r, &v, UINT32_MAX, "previous thread");
		e->previous_thread = (uint32_t)v;
		break;
	case REC_SUSPEND:
		NUMBER_OR_RETURN(r, &e->parent_or_continuation, UINT64_MAX, "continuation");
		break;
	default:
		break;
	}
	if (e->flags & REC_VALUE) {
		NUMBER_OR_RETURN(r, &v, UINT32_MAX, "value length");
		/* not a file cut short: the writer never made such a value */
		if (r->f->buffer && v >= r->f->buffer) {
			fail(r->error, r->error_size, r->f->name, r->offset,
			     "value length %" PRIu64 ": more than the writer's %" PRIu64
			     "-byte buffer holds (the file is corrupt)", v, r->f->buffer);
			return STEP_FAILED;
		}
		if (v > r->c.size - r->c.at)
			return STEP_CUT;
		e->value_len = (uint32_t)v;
		e->value = r->c.data + r->c.at;
		r->c.at += e->value_len;
	}
	return STEP_OK;
}

/* One record, its end byte included. */
static enum step record(struct reader *r)
{
	struct dump_file *f = r->f;
	struct dump_event e;
	enum step step;
	uint8_t tag, end;

	if (!take(&r->c, &tag, 1))
		return STEP_CUT;
	/* 'a' is no record's tag (a resume carries no value): another
	 * recording's preamble, when files were concatenated */
	if (tag == (uint8_t)REC_MAGIC[0] &&
	    r->c.size - r->offset >= sizeof(REC_MAGIC) - 1 &&
	    memcmp(r->c.data + r->offset, REC_MAGIC, sizeof(REC_MAGIC) - 1) == 0)
		return bad(r, "%s", "another recording starts here (files joined into one?): "
			   "give asyncelt-dump each file on its own");
	memset(&e, 0, sizeof(e));
	e.kind = (uint8_t)rec_kind_of(tag);
	e.flags = (uint8_t)rec_flags_of(tag);
	e.offset = r->offset;
	if (e.kind >= REC_KIND_COUNT) {
		fail(r->error, r->error_size, f->name, r->offset,
		     "unknown record kind %u (not a record boundary?)", e.kind);
		return STEP_FAILED;
	}
	if (e.kind == REC_FUNCTION || e.kind == REC_RUN || e.kind == REC_CLOSE) {
		if (e.flags)
			return bad(r, "a %s record with flags", e.kind == REC_RUN ? "run"
				   : e.kind == REC_CLOSE ? "close" : "function");
		step = e.kind == REC_RUN ? start_run(r) : e.kind == REC_CLOSE ? STEP_OK : define(r);
	} else {
		step = event(r, &e);
	}
	if (step != STEP_OK)
		return step;
	if (!take(&r->c, &end, 1))
		return STEP_CUT;
	if (end != REC_END) {
		fail(r->error, r->error_size, f->name, r->c.at - 1,
		     "byte 0x%02x where the record starting at %zu should end "
		     "(0x0a): the file is corrupt", end, r->offset);
		return STEP_FAILED;
	}
	if (e.kind == REC_CLOSE)
		f->closed = true;
	if (e.kind == REC_FUNCTION || e.kind == REC_RUN || e.kind == REC_CLOSE)
		return STEP_OK;
	if (!dump_grow((void **)&f->events, &r->events_cap, f->nevents + 1, sizeof(e)))
		return bad(r, "%s", "out of memory");
	if (e.function == REC_UNREGISTERED && f->version >= 3) {
		if (!dump_grow((void **)&f->unregistered, &r->unregistered_cap,
			       f->nunregistered + 1, sizeof(*f->unregistered)))
			return bad(r, "%s", "out of memory");
		f->unregistered[f->nunregistered++] =
			(struct dump_unregistered){ f->nevents, r->unregistered_id };
	}
	f->events[f->nevents++] = e;
	return STEP_OK;
}

/* Does the file end with a close record?  Then its writer closed it, and
 * a record that seems cut short by its end is damage.  (A killed
 * writer's last record cut where its bytes happen to be those two is
 * possible, and far less likely than damage.) */
static bool closed_at_end(const struct reader *r)
{
	const uint8_t *end = r->c.data + r->c.size;

	return r->f->version >= 4 && r->c.size - r->offset >= 2 &&
	       end[-2] == rec_tag(0, REC_CLOSE) && end[-1] == REC_END;
}

elt_status dump_parse(const void *data, size_t size, const char *name,
		      struct dump_file *out, char *error, size_t error_size)
{
	struct dump_file f;
	struct reader r = { .c = { data, size, 0 }, .f = &f,
			    .error = error, .error_size = error_size };
	elt_status st;

	memset(&f, 0, sizeof(f));
	f.name = name;
	st = parse_preamble(&r.c, &f, error, error_size);
	f.whole_bytes = r.c.at;
	while (st == ELT_OK && r.c.at < r.c.size) {
		enum step step;

		r.offset = r.c.at;
		step = record(&r);
		if (step == STEP_CUT && closed_at_end(&r)) {
			fail(error, error_size, name, r.offset, "a record runs past the end of "
			     "the file, which ends with a close record: not cut short, "
			     "the file is corrupt");
			step = STEP_FAILED;
		}
		if (step == STEP_FAILED)
			st = ELT_E_INVALID_ARGUMENT;
		else if (step == STEP_CUT)
			f.truncated = true;
		else
			f.whole_bytes = r.c.at;
		if (step != STEP_OK)
			break;
	}
	if (st != ELT_OK) {
		dump_file_free(&f);
		return st;
	}
	*out = f;
	return ELT_OK;
}

void dump_file_free(struct dump_file *f)
{
	uint32_t i;

	for (i = 0; i < f->nfunctions; i++)
		if (f->functions[i].signature)
			elt_signature_free(f->functions[i].signature);
	free(f->functions);
	free(f->events);
	free(f->unregistered);
	memset(f, 0, sizeof(*f));
}

uint64_t dump_unregistered_id(const struct dump_file *f, size_t event)
{
	size_t lo = 0, hi = f->nunregistered;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (f->unregistered[mid].event < event)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < f->nunregistered && f->unregistered[lo].event == event
	       ? f->unregistered[lo].id : 0;
}

const char *dump_function_name(const struct dump_file *f, uint32_t index,
			       char *scratch, size_t scratch_size)
{
	if (index < f->nfunctions && f->functions[index].defined)
		return f->functions[index].name;
	if (index == REC_UNREGISTERED)
		return "(unregistered)";
	snprintf(scratch, scratch_size, "#%u", index);
	return scratch;
}

static int by_time(const void *a, const void *b)
{
	const struct dump_ref *x = a, *y = b;

	if (x->time != y->time)
		return x->time < y->time ? -1 : 1;
	if (x->file != y->file)
		return x->file < y->file ? -1 : 1;
	return x->index < y->index ? -1 : x->index > y->index;
}

struct dump_ref *dump_order(const struct dump_file *files, size_t n, size_t *count)
{
	uint64_t origin = UINT64_MAX;
	struct dump_ref *refs;
	size_t total = 0, i, j, k;

	for (i = 0; i < n; i++) {
		total += files[i].nevents;
		if (files[i].base_ns < origin)
			origin = files[i].base_ns;
	}
	refs = malloc((total ? total : 1) * sizeof(*refs));
	if (!refs)
		return NULL;
	for (i = 0, k = 0; i < n; i++)
		for (j = 0; j < files[i].nevents; j++, k++) {
			refs[k].time = files[i].base_ns - origin + files[i].events[j].time;
			refs[k].file = (uint32_t)i;
			refs[k].index = (uint32_t)j;
		}
	qsort(refs, total, sizeof(*refs), by_time);
	*count = total;
	return refs;
}
