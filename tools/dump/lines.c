/*
 * The records as the logging plugin's text or JSON Lines would have shown
 * them, in time order across files, values formatted now by
 * elt_format_value from the signatures the file carries.
 */
#include "output.h"
#include "../../plugins/logging/recording.h"

#include <stdlib.h>
#include <string.h>

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
	uint32_t p, at = 0, i = 0, total = 0;

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

static void put_missing(FILE *out, const struct dump_event *e, bool json)
{
	const char *what = e->kind == REC_CALL || e->kind == REC_RESUME ? "args" : "ret";
	bool incomplete = e->flags & REC_INCOMPLETE;

	if (e->kind == REC_TAILCALL)
		return;
	if (json)
		fprintf(out, incomplete ? ",\"%s_incomplete\":true" : ",\"%s_unavailable\":true",
			what);
	else
		fprintf(out, incomplete ? " %s=<incomplete>" : " %s=<unavailable>", what);
}

static void put_event(FILE *out, struct dump_file *f, const struct dump_event *e,
		      uint64_t time, bool json, bool several)
{
	char scratch[32];
	const char *name = dump_function_name(f, e->function, scratch, sizeof(scratch));
	bool defined = e->function < f->nfunctions && f->functions[e->function].defined;
	uint64_t id = defined ? f->functions[e->function].id : 0;
	const char *kind = elt_segment_kind_name((elt_segment_kind)e->kind);
	bool have_inv = !(e->flags & REC_NO_INVOCATION);

	if (json) {
		fprintf(out, "{\"ts_ns\":%llu", (unsigned long long)time);
		if (several)
			fprintf(out, ",\"pid\":%ld", f->pid);
		fprintf(out, ",\"thread\":%u,\"function\":", e->thread);
		put_json_string(out, name);
		fprintf(out, ",\"id\":\"%#llx\",\"kind\":\"%s\",\"invocation\":",
			(unsigned long long)id, kind);
	} else {
		fprintf(out, "%llu.%09llu", (unsigned long long)(time / 1000000000u),
			(unsigned long long)(time % 1000000000u));
		if (several)
			fprintf(out, " pid=%ld", f->pid);
		fprintf(out, " thread=%u function=%s id=%#llx kind=%s invocation=", e->thread,
			name, (unsigned long long)id, kind);
	}
	if (have_inv)
		fprintf(out, "%llu", (unsigned long long)e->invocation);
	else
		fputs(json ? "null" : "?", out);
	if (have_inv && e->kind == REC_CALL)
		fprintf(out, json ? ",\"parent\":%llu" : " parent=%llu",
			(unsigned long long)e->parent_or_continuation);
	if (have_inv && e->kind == REC_RESUME)
		fprintf(out, json ? ",\"segment\":%u" : " segment=%u", e->segment);
	if (e->flags & REC_ORPHAN)
		fputs(json ? ",\"orphan\":true" : " orphan=yes", out);
	if (e->kind == REC_RESUME || e->kind == REC_SUSPEND)
		fprintf(out, json ? ",\"continuation\":\"%#llx\"" : " continuation=%#llx",
			(unsigned long long)e->parent_or_continuation);
	if (e->flags & REC_VALUE) {
		const elt_signature *sig = signature_of(f, e->function);

		if (e->kind == REC_CALL)
			put_arguments(out, sig, e, json);
		else
			put_return(out, sig, e, json);
	} else if (e->kind == REC_CALL || e->kind == REC_RETURN) {
		put_missing(out, e, json);
	}
	fputs(json ? "}\n" : "\n", out);
}

void output_lines(FILE *out, struct dump_file *files, size_t n, bool json)
{
	size_t count, k;
	struct dump_ref *refs = dump_order(files, n, &count);

	if (!refs) {
		fprintf(stderr, "asyncelt-dump: out of memory\n");
		return;
	}
	for (k = 0; k < count; k++) {
		struct dump_file *f = &files[refs[k].file];

		put_event(out, f, &f->events[refs[k].index], refs[k].time, json, n > 1);
	}
	free(refs);
}
