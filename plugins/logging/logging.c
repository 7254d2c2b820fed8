/*
 * logging: one line per segment callback, as text or JSON Lines: when,
 * which thread, which function, what kind of segment, which logical
 * invocation, the continuation, and the decoded arguments of a call or the
 * return value of a final return.
 *
 *     ASYNCELT_PLUGINS='logging:format=json,output=trace-%p.jsonl'
 *
 * or, with format=binary (binary.c), compact records that asyncelt-dump
 * turns into text, JSON Lines, a Chrome trace, a report or a picture later.
 *
 * A template for plugins that record every segment: each thread appends
 * its lines to its own buffer (plugins/common/tbuf.h), so the callbacks
 * take no lock and make no system call, except to write out a full buffer
 * (a rare slow step: nothing is ever dropped).
 */
#include <asyncelt.h>
#include <asyncelt/plugin.h>

#include "../common/clock.h"
#include "../common/tbuf.h"
#include "binary.h"
#include "recording.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

extern const elt_plugin elt_plugin_logging;     /* init sets its flags */

enum format { TEXT, JSON, BINARY };

struct logging {
	struct tbuf_set *out;           /* TEXT and JSON */
	struct binary_log *binary;      /* BINARY */
	bool json;
	uint64_t start_ticks;           /* timestamps count from init */
};

/* --- options ------------------------------------------------------------- */

static elt_status parse_options(const char *options, char *path, size_t path_size,
				enum format *format, size_t *capacity)
{
	const char *cursor = options;
	elt_option opt;
	elt_status st;

	while ((st = elt_option_next(&cursor, &opt)) == ELT_OK && opt.key) {
		if (elt_option_is(&opt, "output")) {
			st = elt_option_copy(&opt, path, path_size);
			if (st != ELT_OK)
				return st;
		} else if (elt_option_is(&opt, "format") && opt.value_len == 4 &&
			   memcmp(opt.value, "json", 4) == 0) {
			*format = JSON;
		} else if (elt_option_is(&opt, "format") && opt.value_len == 4 &&
			   memcmp(opt.value, "text", 4) == 0) {
			*format = TEXT;
		} else if (elt_option_is(&opt, "format") && opt.value_len == 6 &&
			   memcmp(opt.value, "binary", 6) == 0) {
			*format = BINARY;
		} else if (elt_option_is(&opt, "format")) {
			return elt_set_error(ELT_E_BAD_OPTION,
					     "format: \"%.*s\" is not text, json or binary",
					     (int)opt.value_len, opt.value);
		} else if (elt_option_is(&opt, "buffer")) {
			uint64_t bytes;

			st = elt_option_number(&opt, TBUF_MIN_CAPACITY, TBUF_MAX_CAPACITY, &bytes);
			if (st != ELT_OK)
				return st;
			*capacity = (size_t)bytes;
		} else {
			return elt_set_error(ELT_E_BAD_OPTION,
					     "unknown option \"%.*s\" (known: output, format, buffer)",
					     (int)opt.key_len, opt.key);
		}
	}
	return st;
}

static elt_status logging_init(const char *options, void **state)
{
	struct logging *l = calloc(1, sizeof(*l));
	size_t capacity = TBUF_DEFAULT_CAPACITY;
	enum format format = TEXT;
	char path[4096] = "";
	elt_status st;

	if (!l)
		return elt_set_error(ELT_E_NO_MEMORY, "out of memory");
	st = parse_options(options, path, sizeof(path), &format, &capacity);
	l->json = format == JSON;
	if (st == ELT_OK && format == BINARY && !*path)
		st = elt_set_error(ELT_E_BAD_OPTION,
				   "format=binary needs output=FILE (it is not for a terminal)");
	else if (st == ELT_OK && format == BINARY)
		st = binary_open(&l->binary, path, capacity);
	else if (st == ELT_OK)
		st = tbuf_open(&l->out, "output", *path ? path : TBUF_STDERR, capacity,
			       0, NULL, NULL);
	if (st != ELT_OK) {
		free(l);
		return st;
	}
	/* Recording copies bytes and integers: no floating point on the
	 * instrumented thread, so the helpers need not save its control
	 * state; text and JSON convert floating-point values. */
	if (format == BINARY)
		elt_plugin_set_flags(&elt_plugin_logging, ELT_PLUGIN_NO_FLOAT);
	plugin_clock_init();
	l->start_ticks = plugin_ticks();
	*state = l;
	return ELT_OK;
}

/* --- one line (the hot path: the thread's own buffer only) --------------- */

/* Seconds since init, with nanoseconds: 12.000034567 */
static void put_time(struct tbuf *b, uint64_t ns)
{
	char frac[10];
	int i;

	tbuf_put_u64(b, ns / 1000000000u);
	frac[0] = '.';
	for (i = 9, ns %= 1000000000u; i > 0; i--, ns /= 10)
		frac[i] = (char)('0' + ns % 10);
	tbuf_put(b, frac, sizeof(frac));
}

/* A named field: ` name=` in text, `,"name":` in JSON.  A macro, so that
 * both spellings are literals whose lengths are known when compiled. */
#define FIELD(b, json, name) \
	((json) ? tbuf_put_str(b, ",\"" name "\":") : tbuf_put_str(b, " " name "="))

/* Why a value is not shown: `args=<incomplete>` in text;
 * `"args_incomplete":true` or `"args_unavailable":"why"` in JSON. */
static void missing(struct tbuf *b, bool json, const char *what, elt_status st,
		    const char *why)
{
	bool incomplete = st == ELT_E_DATAINCOMPLETE;

	if (json) {
		tbuf_put_str(b, ",\"");
		tbuf_put_str(b, what);
		tbuf_put_str(b, incomplete ? "_incomplete\":true" : "_unavailable\":\"");
		if (!incomplete) {
			tbuf_put_json_str(b, why);
			tbuf_put_char(b, '"');
		}
	} else {
		tbuf_put_char(b, ' ');
		tbuf_put_str(b, what);
		tbuf_put_str(b, incomplete ? "=<incomplete" : "=<unavailable: ");
		if (!incomplete)
			tbuf_put_str(b, why);
		tbuf_put_char(b, '>');
	}
}

/* Why nothing can describe this function's values, without asking a
 * getter (a failing getter formats a message: costly on the hot path). */
static const char *undecodable(const elt_function_desc *fn, elt_status *st)
{
	*st = !fn ? ELT_E_UNKNOWN_FUNCTION : ELT_E_NO_SIGNATURE;
	if (!fn)
		return "unregistered function";
	return fn->signature ? NULL : "registered without a signature";
}

static void put_args(struct tbuf *b, bool json, const elt_info *info,
		     const elt_function_desc *fn)
{
	elt_range ranges[REC_ARGS_MAX];
	size_t count = REC_ARGS_MAX, i;
	const elt_signature *sig;
	elt_status st;
	const char *why = undecodable(fn, &st);
	uint32_t p;

	if (!why)
		st = elt_get_enter_info(info, ranges, &count, NULL);
	if (st == ELT_E_INSUFFICIENT_BUFFER)
		why = REC_ARGS_BEYOND;
	if (st != ELT_OK) {
		missing(b, json, "args", st, why ? why : elt_last_error());
		return;
	}
	sig = fn->signature;
	FIELD(b, json, "args");
	tbuf_put_char(b, json ? '[' : '(');
	/* the ranges follow the parameters, the continuation left out */
	for (i = 0, p = 0; i < count && p < sig->nparams; p++) {
		if ((int32_t)p == sig->continuation_index)
			continue;
		if (i)
			tbuf_put_str(b, json ? "," : ", ");
		tbuf_put_value(b, sig->params[p], (const void *)ranges[i].start,
			       json ? ELT_FORMAT_JSON : 0);
		i++;
	}
	tbuf_put_char(b, json ? ']' : ')');
}

static void put_return(struct tbuf *b, bool json, const elt_info *info,
		       const elt_function_desc *fn)
{
	elt_range range;
	elt_status st;
	const char *why = undecodable(fn, &st);

	if (!why)
		st = elt_get_return_info(info, &range);
	if (st != ELT_OK) {
		missing(b, json, "ret", st, why ? why : elt_last_error());
		return;
	}
	FIELD(b, json, "ret");
	tbuf_put_value(b, fn->signature->ret, (const void *)range.start,
		       json ? ELT_FORMAT_JSON : 0);
}

/* Not inlined into log_segment: its frame would be the binary format's too. */
static __attribute__((noinline)) void log_line(struct logging *l, const elt_info *info)
{
	uint64_t ns = plugin_ticks_to_ns(plugin_ticks() - l->start_ticks);
	struct tbuf *b = tbuf_get(l->out);
	const elt_function_desc *fn = elt_get_function(info);
	elt_segment_kind kind = elt_get_segment_kind(info);
	elt_invocation inv;
	bool have_inv = elt_get_invocation(info, &inv) == ELT_OK;
	void *k = NULL;
	bool json = l->json;

	if (!b)
		return;         /* out of memory: counted by tbuf */
	if (fn)         /* unregistered: nothing says where it would be */
		elt_get_continuation(info, &k);

	if (json) {
		tbuf_put_str(b, "{\"ts_ns\":");
		tbuf_put_u64(b, ns);
	} else {
		put_time(b, ns);
	}
	FIELD(b, json, "thread");
	tbuf_put_u64(b, inv.thread);    /* known without an invocation too */
	FIELD(b, json, "function");
	if (json && fn) {
		tbuf_put_char(b, '"');
		tbuf_put_json_str(b, fn->name);
		tbuf_put_char(b, '"');
	} else if (fn) {
		tbuf_put_str(b, fn->name);
	} else {
		tbuf_put_str(b, json ? "null" : "?");
	}
	FIELD(b, json, "id");
	if (json)
		tbuf_put_char(b, '"');
	tbuf_put_hex(b, elt_get_function_id(info));
	if (json)
		tbuf_put_str(b, "\",\"kind\":\"");
	else
		FIELD(b, false, "kind");
	tbuf_put_str(b, elt_segment_kind_name(kind));
	if (json)
		tbuf_put_char(b, '"');
	FIELD(b, json, "invocation");
	if (have_inv)
		tbuf_put_u64(b, inv.id);
	else
		tbuf_put_str(b, json ? "null" : "?");
	if (have_inv) {
		FIELD(b, json, "parent");
		tbuf_put_u64(b, inv.parent);
		FIELD(b, json, "segment");
		tbuf_put_u64(b, inv.segment);
		if (inv.flags & ELT_INVOCATION_ORPHAN) {
			FIELD(b, json, "orphan");
			tbuf_put_str(b, json ? "true" : "yes");
		}
	}
	FIELD(b, json, "continuation");
	if (json)
		tbuf_put_char(b, '"');
	tbuf_put_hex(b, (uintptr_t)k);
	if (json)
		tbuf_put_char(b, '"');

	if (kind == ELT_SEGMENT_CALL || kind == ELT_SEGMENT_RESUME)
		put_args(b, json, info, fn);
	else if (kind == ELT_SEGMENT_SUSPEND || kind == ELT_SEGMENT_RETURN)
		put_return(b, json, info, fn);
	if (json)
		tbuf_put_char(b, '}');
	tbuf_end_line(b);
}

static void log_segment(const elt_info *info, void *state)
{
	struct logging *l = state;

	if (l->binary)
		binary_segment(l->binary, info);
	else
		log_line(l, info);
}

/* Only the binary format keeps a function table (the lines name them). */
static void *logging_function_added(void *state, const elt_function_desc *fn)
{
	struct logging *l = state;

	if (l->binary)
		binary_function_added(l->binary, fn);
	return NULL;
}

/* --- thread exit and the end --------------------------------------------- */

static void logging_thread_exit(void *state)
{
	struct logging *l = state;

	if (l->binary)
		binary_thread_exit(l->binary);
	else
		tbuf_thread_exit(l->out);
}

static elt_status logging_fini(void *state)
{
	struct logging *l = state;
	elt_status st = l->binary ? binary_close(l->binary) : tbuf_close(l->out);

	free(l);
	return st;
}

ELT_PLUGIN_DEFINE(logging,
	.description = "one record per segment: text, JSON Lines or binary",
	.init = logging_init,
	.enter = log_segment,
	.leave = log_segment,
	.tailcall = log_segment,
	.function_added = logging_function_added,
	.thread_exit = logging_thread_exit,
	.fini = logging_fini);
