/*
 * Reading a binary recording: see read.h.  Every length is checked
 * against what is left before it is used; the first malformed record stops
 * the reading with its offset, a record cut short by the end of the file
 * ends it with a warning.
 */
#include "read.h"
#include "../../plugins/logging/recording.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct cursor {
	const uint8_t *data;
	size_t size, at;
	bool swap;                      /* the writer's byte order is not ours */
};

static bool take(struct cursor *c, void *dst, size_t n)
{
	if (n > c->size - c->at)
		return false;
	memcpy(dst, c->data + c->at, n);
	c->at += n;
	return true;
}

static bool take_u32(struct cursor *c, uint32_t *v)
{
	if (!take(c, v, sizeof(*v)))
		return false;
	if (c->swap)
		*v = __builtin_bswap32(*v);
	return true;
}

static bool take_u64(struct cursor *c, uint64_t *v)
{
	if (!take(c, v, sizeof(*v)))
		return false;
	if (c->swap)
		*v = __builtin_bswap64(*v);
	return true;
}

/* The fixed header, field by field (in the writer's byte order). */
static bool take_header(struct cursor *c, struct rec_header *h)
{
	return take_u64(c, &h->time) && take_u64(c, &h->invocation) &&
	       take_u32(c, &h->function) && take_u32(c, &h->thread_kind);
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

static elt_status parse_preamble(struct cursor *c, struct dump_file *f, char *error,
				 size_t error_size)
{
	const char *text = (const char *)c->data;
	size_t limit = c->size < REC_PREAMBLE_MAX ? c->size : REC_PREAMBLE_MAX;
	size_t magic_len = strlen(REC_MAGIC);
	bool have_base = false, have_clock = false;
	size_t at = 0;
	int version = 0;

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
			if (version != REC_VERSION)
				return fail(error, error_size, f->name, 0,
					    "format version %d; this reader reads version %d",
					    version, REC_VERSION);
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
		if (sscanf(value, REC_MAGIC " %d", &version) == 1)
			continue;
		if (sscanf(value, "pid %ld", &f->pid) == 1)
			continue;
		if (strncmp(value, "abi ", 4) == 0) {
			snprintf(f->abi, sizeof(f->abi), "%s", value + 4);
			continue;
		}
		if (strncmp(value, "byte-order ", 11) == 0) {
			const uint16_t one = 1;
			const char *host = *(const unsigned char *)&one ? "little" : "big";

			if (strcmp(value + 11, "little") != 0 && strcmp(value + 11, "big") != 0)
				return fail(error, error_size, f->name, (size_t)(line - text),
					    "unknown byte order \"%s\"", value + 11);
			c->swap = strcmp(value + 11, host) != 0;
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
		if (sscanf(value, "base %" SCNu64, &f->base_ns) == 1) {
			have_base = true;
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

static bool grow(void **array, size_t *capacity, size_t need, size_t item)
{
	size_t cap = *capacity;
	void *bigger;

	if (need <= cap)
		return true;
	while (cap < need)
		cap = cap ? 2 * cap : 256;
	bigger = realloc(*array, cap * item);
	if (!bigger)
		return false;
	*array = bigger;
	*capacity = cap;
	return true;
}

/* A REC_FUNCTION record's payload (n bytes at p). */
/* The smallest function record: header, length, flags, two empty strings
 * and the end byte. */
#define FUNCTION_RECORD_MIN (REC_HEADER_SIZE + 4 + 4 + 2 + 1)

static elt_status define(struct dump_file *f, const struct rec_header *h, const uint8_t *p,
			 uint32_t n, bool swap, size_t file_size, size_t offset,
			 size_t *capacity, char *error, size_t error_size)
{
	const char *name, *sig, *end = (const char *)p + n;
	struct dump_function *fn;
	uint32_t flags;

	if (n < sizeof(flags) + 2)
		return fail(error, error_size, f->name, offset,
			    "function record of %u bytes: too short", n);
	memcpy(&flags, p, sizeof(flags));
	if (swap)
		flags = __builtin_bswap32(flags);
	name = (const char *)p + sizeof(flags);
	sig = memchr(name, '\0', (size_t)(end - name));
	if (!sig || !memchr(sig + 1, '\0', (size_t)(end - sig - 1)) ||
	    (const char *)memchr(sig + 1, '\0', (size_t)(end - sig - 1)) != end - 1)
		return fail(error, error_size, f->name, offset,
			    "function record: name and signature are not two "
			    "NUL-terminated strings filling it");
	/* every function before it has a record too (the writer defines each
	 * one): an index beyond what the file could hold is damage, and would
	 * make the table huge */
	if (h->function == REC_UNREGISTERED || h->function >= (1u << 24) ||
	    h->function > file_size / FUNCTION_RECORD_MIN)
		return fail(error, error_size, f->name, offset,
			    "function index %u: more functions than a %zu-byte file holds",
			    h->function, file_size);
	if (!grow((void **)&f->functions, capacity, (size_t)h->function + 1,
		  sizeof(*f->functions)))
		return fail(error, error_size, f->name, offset, "out of memory");
	while (f->nfunctions <= h->function)
		memset(&f->functions[f->nfunctions++], 0, sizeof(*fn));
	fn = &f->functions[h->function];
	if (fn->defined && strcmp(fn->name, name) != 0)
		return fail(error, error_size, f->name, offset,
			    "function %u defined twice, as \"%s\" and \"%s\"",
			    h->function, fn->name, name);
	fn->defined = true;
	fn->flags = flags;
	fn->id = h->invocation;
	fn->name = name;
	fn->signature_text = sig + 1;
	return ELT_OK;
}

/* Reads the payload of an event into e; false when the file ends first. */
static bool read_payload(struct cursor *c, struct dump_event *e, bool *bad_length)
{
	*bad_length = false;
	switch (e->kind) {
	case REC_CALL:          /* the parent */
	case REC_SUSPEND:       /* the continuation */
		if (!take_u64(c, &e->parent_or_continuation))
			return false;
		break;
	case REC_RESUME:        /* struct rec_resume */
		if (!take_u64(c, &e->parent_or_continuation) || !take_u32(c, &e->segment) ||
		    !take_u32(c, &e->previous_thread))
			return false;
		break;
	default:
		break;
	}
	if (e->flags & REC_VALUE) {
		if (e->kind != REC_CALL && e->kind != REC_RETURN) {
			*bad_length = true;
			return true;
		}
		if (!take_u32(c, &e->value_len))
			return false;
		if (e->value_len > c->size - c->at)
			return false;
		e->value = c->data + c->at;
		c->at += e->value_len;
	}
	return true;
}

elt_status dump_parse(const void *data, size_t size, const char *name,
		      struct dump_file *out, char *error, size_t error_size)
{
	struct cursor c = { data, size, 0, false };
	struct dump_file f;
	size_t events_cap = 0, functions_cap = 0;
	elt_status st;

	memset(&f, 0, sizeof(f));
	f.name = name;
	st = parse_preamble(&c, &f, error, error_size);
	f.whole_bytes = c.at;
	while (st == ELT_OK && c.at < c.size) {
		size_t offset = c.at;
		struct rec_header h;
		struct dump_event e;
		bool bad_length;
		uint8_t end;

		if (!take_header(&c, &h)) {
			f.truncated = true;
			break;
		}
		memset(&e, 0, sizeof(e));
		e.kind = (uint8_t)rec_kind_of(h.thread_kind);
		e.flags = (uint8_t)rec_flags_of(h.thread_kind);
		e.offset = offset;
		if (e.kind >= REC_KIND_COUNT) {
			st = fail(error, error_size, name, offset,
				  "unknown record kind %u (not a record boundary?)", e.kind);
			break;
		}
		if (e.kind == REC_FUNCTION) {
			uint32_t n;

			if (!take_u32(&c, &n) || n > c.size - c.at) {
				f.truncated = true;
				break;
			}
			st = define(&f, &h, c.data + c.at, n, c.swap, c.size, offset,
				    &functions_cap, error, error_size);
			c.at += n;
		} else {
			e.time = h.time;
			e.invocation = h.invocation;
			e.function = h.function;
			e.thread = rec_thread_of(h.thread_kind);
			if (!read_payload(&c, &e, &bad_length)) {
				f.truncated = true;
				break;
			}
			if (bad_length) {
				st = fail(error, error_size, name, offset,
					  "a %s record cannot carry a value",
					  elt_segment_kind_name((elt_segment_kind)e.kind));
				break;
			}
			if (!grow((void **)&f.events, &events_cap, f.nevents + 1,
				  sizeof(e))) {
				st = fail(error, error_size, name, offset, "out of memory");
				break;
			}
			f.events[f.nevents++] = e;
		}
		if (st != ELT_OK)
			break;
		if (!take(&c, &end, 1)) {
			f.truncated = true;
			break;
		}
		if (end != REC_END) {
			st = fail(error, error_size, name, c.at - 1,
				  "byte 0x%02x where the record starting at %zu should end "
				  "(0x0a): the file is corrupt", end, offset);
			break;
		}
		f.whole_bytes = c.at;
	}
	if (st != ELT_OK) {
		dump_file_free(&f);
		return st;
	}
	if (f.truncated && f.nevents && f.events[f.nevents - 1].offset >= f.whole_bytes)
		f.nevents--;    /* its end byte never came */
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
	memset(f, 0, sizeof(*f));
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
