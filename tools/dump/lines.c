/*
 * The records as the logging plugin's text or JSON Lines would have shown
 * them, in time order across files, values formatted now by
 * elt_format_value from the signatures the file carries: the same fields
 * in the same order.  What a record leaves out because an earlier one
 * said it (an invocation's parent, given at its call; its segment, given
 * at its last resume) is carried over from that one.
 */
#include "output.h"
#include "../../plugins/logging/recording.h"

#include <stdlib.h>
#include <string.h>

/* --- what the invocations said earlier ------------------------------------ */

/* One invocation of one file, as its latest call or resume left it. */
struct known {
	uint64_t invocation;            /* 0: a free entry */
	uint64_t parent;
	uint32_t file;
	uint32_t segment;
};

struct invocations {
	struct known *entries;          /* open addressing; a power of two */
	size_t capacity, count;
};

static size_t slot_of(const struct invocations *t, uint32_t file, uint64_t invocation)
{
	size_t i = (size_t)((invocation ^ (uint64_t)file << 56) * 0x9e3779b97f4a7c15ull >> 17);

	for (i &= t->capacity - 1;; i = (i + 1) & (t->capacity - 1)) {
		const struct known *k = &t->entries[i];

		if (!k->invocation || (k->invocation == invocation && k->file == file))
			return i;
	}
}

/* The entry of an invocation, made (zeroed) if new; NULL when out of
 * memory. */
static struct known *known(struct invocations *t, uint32_t file, uint64_t invocation)
{
	struct known *k;

	if (2 * (t->count + 1) > t->capacity) {
		struct invocations bigger = { NULL, t->capacity ? 2 * t->capacity : 1024, 0 };
		size_t i;

		if (bigger.capacity < t->capacity ||
		    !(bigger.entries = calloc(bigger.capacity, sizeof(*bigger.entries))))
			return NULL;
		for (i = 0; i < t->capacity; i++)
			if (t->entries[i].invocation)
				bigger.entries[slot_of(&bigger, t->entries[i].file,
						       t->entries[i].invocation)] = t->entries[i];
		bigger.count = t->count;
		free(t->entries);
		*t = bigger;
	}
	k = &t->entries[slot_of(t, file, invocation)];
	if (!k->invocation) {
		*k = (struct known){ .invocation = invocation, .file = file };
		t->count++;
	}
	return k;
}

/* The parent and segment the live line of e shows: a call's own, a
 * resume's segment with its call's parent, an end's from its latest
 * call or resume (0 and 0 when neither was recorded, or an orphan). */
static void carry(struct invocations *t, uint32_t file, const struct dump_event *e,
		  uint64_t *parent, uint32_t *segment)
{
	struct known *k = e->invocation ? known(t, file, e->invocation) : NULL;

	if (e->kind == REC_CALL && k) {
		k->parent = e->parent_or_continuation;
		k->segment = 0;
	} else if (e->kind == REC_RESUME && k) {
		k->segment = e->segment;
	}
	*parent = k ? k->parent : e->kind == REC_CALL ? e->parent_or_continuation : 0;
	*segment = k ? k->segment : e->kind == REC_RESUME ? e->segment : 0;
}

/* --- formatting ------------------------------------------------------------ */

/* A signature, parsed once per function; NULL when it cannot be used
 * here (none, unparsable, or recorded on another ABI: sizes differ). */
static const elt_signature *signature_of(struct dump_file *f, uint32_t index)
{
	struct dump_function *fn;

	if (index >= f->nfunctions || !f->functions[index].defined)
		return NULL;
	fn = &f->functions[index];
	if (!fn->signature && *fn->signature_text && strcmp(f->abi, elt_abi_name()) == 0)
		if (elt_signature_parse(fn->signature_text, &fn->signature, NULL) != ELT_OK)
			fn->signature = NULL;
	return fn->signature;
}

static void put_json_string(FILE *out, const char *s)
{
	fputc('"', out);
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '"' || c == '\\')
			fprintf(out, "\\%c", c);
		else if (c < 0x20)
			fprintf(out, "\\u%04x", c);
		else
			fputc(c, out);
	}
	fputc('"', out);
}

static void put_hex_bytes(FILE *out, const uint8_t *p, uint32_t n, bool json)
{
	uint32_t i;

	fputs(json ? "\"0x" : "0x", out);
	for (i = 0; i < n; i++)
		fprintf(out, "%02x", p[i]);
	if (json)
		fputc('"', out);
}

static void put_value(FILE *out, const elt_type *t, const uint8_t *p, bool json)
{
	char small[256];
	size_t need = elt_format_value(t, p, json ? ELT_FORMAT_JSON : 0, small, sizeof(small));
	char *big;

	if (need < sizeof(small)) {
		fputs(small, out);
		return;
	}
	big = malloc(need + 1);
	if (big) {
		elt_format_value(t, p, json ? ELT_FORMAT_JSON : 0, big, need + 1);
		fputs(big, out);
		free(big);
	}
}

/* Copies a value out of the file, aligned as malloc aligns (for any
 * scalar type): the file keeps values packed. */
static void put_value_at(FILE *out, const elt_type *t, const uint8_t *p, bool json)
{
	void *aligned = malloc(t->size ? t->size : 1);

	if (!aligned) {
		put_hex_bytes(out, p, t->size, json);
		return;
	}
	memcpy(aligned, p, t->size);
	put_value(out, t, aligned, json);
	free(aligned);
}

/* The arguments of a call: each parameter's bytes in turn, K left out. */
static void put_arguments(FILE *out, const elt_signature *sig, const struct dump_event *e,
			  bool json)
{
	uint32_t p, at = 0, i = 0;
	uint64_t total = 0;     /* each size is below 2^31, their sum may not be */

	for (p = 0; sig && p < sig->nparams; p++)
		if ((int32_t)p != sig->continuation_index)
			total += sig->params[p]->size;
	fputs(json ? ",\"args\":" : " args=", out);
	if (!sig || total != e->value_len) {
		/* nothing says how to split them: the bytes as they are */
		put_hex_bytes(out, e->value, e->value_len, json);
		return;
	}
	fputc(json ? '[' : '(', out);
	for (p = 0; p < sig->nparams; p++) {
		if ((int32_t)p == sig->continuation_index)
			continue;
		if (i++)
			fputs(json ? "," : ", ", out);
		put_value_at(out, sig->params[p], e->value + at, json);
		at += sig->params[p]->size;
	}
	fputc(json ? ']' : ')', out);
}

static void put_return(FILE *out, const elt_signature *sig, const struct dump_event *e,
		       bool json)
{
	fputs(json ? ",\"ret\":" : " ret=", out);
	if (!sig || sig->ret->size != e->value_len)
		put_hex_bytes(out, e->value, e->value_len, json);
	else
		put_value_at(out, sig->ret, e->value, json);
}

/* A segment without its value, as logging's missing() says it: a resume
 * or suspension never has one; a call or return of a function the file
 * cannot decode says why, as the writer would have. */
static void put_missing(FILE *out, struct dump_file *f, const struct dump_event *e,
			bool json)
{
	const char *what = e->kind == REC_CALL || e->kind == REC_RESUME ? "args" : "ret";
	bool incomplete = (e->flags & REC_INCOMPLETE) || e->kind == REC_RESUME ||
			  e->kind == REC_SUSPEND;
	const elt_signature *sig = signature_of(f, e->function);
	const char *why = "not recorded";

	if (e->function == REC_UNREGISTERED)
		why = "unregistered function";
	else if (e->function < f->nfunctions && f->functions[e->function].defined &&
		 !*f->functions[e->function].signature_text)
		why = "registered without a signature";
	else if (e->kind == REC_CALL && sig &&
		 sig->nparams - (sig->continuation_index >= 0) > REC_ARGS_MAX)
		why = REC_ARGS_BEYOND;
	if (json) {
		fprintf(out, incomplete ? ",\"%s_incomplete\":true" : ",\"%s_unavailable\":",
			what);
		if (!incomplete)
			put_json_string(out, why);
	} else {
		fprintf(out, incomplete ? " %s=<incomplete>" : " %s=<unavailable: %s>", what,
			why);
	}
}

/* One line, as plugins/logging/logging.c's log_line writes it live (a
 * format 2 file did not keep an unregistered function's id: 0x0). */
static void put_event(FILE *out, struct dump_file *f, uint32_t file, size_t index,
		      uint64_t time, bool json, bool several, struct invocations *seen)
{
	const struct dump_event *e = &f->events[index];
	char scratch[32];
	const char *name = e->function == REC_UNREGISTERED
			   ? NULL : dump_function_name(f, e->function, scratch, sizeof(scratch));
	bool defined = e->function < f->nfunctions && f->functions[e->function].defined;
	uint64_t id = defined ? f->functions[e->function].id
		      : e->function == REC_UNREGISTERED ? dump_unregistered_id(f, index) : 0;
	const char *kind = elt_segment_kind_name((elt_segment_kind)e->kind);
	bool have_inv = !(e->flags & REC_NO_INVOCATION);
	uint64_t continuation = e->kind == REC_RESUME || e->kind == REC_SUSPEND
				? e->parent_or_continuation : 0;

	if (json) {
		fprintf(out, "{\"ts_ns\":%llu", (unsigned long long)time);
		if (several)
			fprintf(out, ",\"pid\":%ld", f->pid);
		fprintf(out, ",\"thread\":%u,\"function\":", e->thread);
		if (name)
			put_json_string(out, name);
		else
			fputs("null", out);
		fprintf(out, ",\"id\":\"0x%llx\",\"kind\":\"%s\",\"invocation\":",
			(unsigned long long)id, kind);
	} else {
		fprintf(out, "%llu.%09llu", (unsigned long long)(time / 1000000000u),
			(unsigned long long)(time % 1000000000u));
		if (several)
			fprintf(out, " pid=%ld", f->pid);
		fprintf(out, " thread=%u function=%s id=0x%llx kind=%s invocation=", e->thread,
			name ? name : "?", (unsigned long long)id, kind);
	}
	if (have_inv) {
		uint64_t parent;
		uint32_t segment;

		carry(seen, file, e, &parent, &segment);
		fprintf(out, json ? "%llu,\"parent\":%llu,\"segment\":%u"
				  : "%llu parent=%llu segment=%u",
			(unsigned long long)e->invocation, (unsigned long long)parent, segment);
	} else {
		fputs(json ? "null" : "?", out);
	}
	if (e->flags & REC_ORPHAN)
		fputs(json ? ",\"orphan\":true" : " orphan=yes", out);
	/* "%#llx" of 0 is "0", where logging writes "0x0" */
	fprintf(out, json ? ",\"continuation\":\"0x%llx\"" : " continuation=0x%llx",
		(unsigned long long)continuation);
	if (e->flags & REC_VALUE) {
		const elt_signature *sig = signature_of(f, e->function);

		if (e->kind == REC_CALL)
			put_arguments(out, sig, e, json);
		else
			put_return(out, sig, e, json);
	} else if (e->kind != REC_TAILCALL) {
		put_missing(out, f, e, json);
	}
	fputs(json ? "}\n" : "\n", out);
}

void output_lines(FILE *out, struct dump_file *files, size_t n, bool json)
{
	struct invocations seen = { NULL, 0, 0 };
	size_t count, k;
	struct dump_ref *refs = dump_order(files, n, &count);

	if (!refs) {
		fprintf(stderr, "asyncelt-dump: out of memory\n");
		return;
	}
	for (k = 0; k < count; k++) {
		struct dump_file *f = &files[refs[k].file];

		put_event(out, f, refs[k].file, refs[k].index, refs[k].time, json, n > 1,
			  &seen);
	}
	free(seen.entries);
	free(refs);
}
