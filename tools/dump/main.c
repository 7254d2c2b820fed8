/*
 * asyncelt-dump: reads what logging:format=binary recorded, offline, and
 * writes it as text, JSON Lines, a Chrome trace, the timing table or an
 * SVG timeline.  Recording and reading are apart, so the instrumented
 * program pays for 24-byte records only.
 */
#include "output.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char usage[] =
"NAME\n"
"    asyncelt-dump - read libasyncelt binary recordings\n"
"\n"
"SYNOPSIS\n"
"    asyncelt-dump [--text | --jsonl | --chrome | --summary | --svg] [options] FILE...\n"
"\n"
"DESCRIPTION\n"
"    Reads the files that ASYNCELT_PLUGINS='logging:format=binary,output=run-%p.bin'\n"
"    wrote (one per process with %p; several files merge on one time axis) and\n"
"    writes one view of them to standard output, or to --output FILE.\n"
"    A file its process never closed (killed, abort, _exit: what its threads\n"
"    still buffered is lost) is read with a warning, and one cut short inside\n"
"    a record up to its last whole record; a corrupt file stops the command\n"
"    with the offset and the problem.  --svg also reads a Chrome trace that\n"
"    timing:trace= wrote.\n"
"\n"
"OUTPUTS\n"
"    --text      one line per segment, as logging's text format (the default)\n"
"    --jsonl     one JSON object per segment, as logging's format=json\n"
"    --chrome    a Chrome Trace Event file, as timing:trace=: slices per thread,\n"
"                flows from each suspension to its resume, an async track per\n"
"                invocation (Perfetto UI, chrome://tracing)\n"
"    --summary   the timing plugin's table: per function calls, segments, and\n"
"                wall, active, suspended, latency, segments, hops percentiles\n"
"    --svg       an invocation timeline: one row per logical invocation, its\n"
"                segments colored by thread, suspensions as thin lines, hops\n"
"                marked; per-thread lanes below.  Self-contained, deterministic\n"
"\n"
"OPTIONS\n"
"    -o, --output FILE   write there instead of standard output\n"
"    --function NAME     --svg: only invocations of NAME (and those they call)\n"
"    --from US, --to US  --svg: only this time window, in microseconds\n"
"    --top N             --svg: at most N rows, the earliest first (default 200)\n"
"    --width PX          --svg: width of the time axis (default 1200)\n"
"    -h, --help          this text\n"
"\n"
"EXIT STATUS\n"
"    0 when every file was read (maybe cut short), 1 on an error, 2 on bad usage.\n";

enum view { TEXT, JSONL, CHROME, SUMMARY, SVG };

static char *read_whole(const char *path, size_t *size)
{
	FILE *f = strcmp(path, "-") == 0 ? stdin : fopen(path, "rb");
	size_t cap = 1 << 16, len = 0;
	char *data = NULL, *bigger;

	if (!f) {
		fprintf(stderr, "asyncelt-dump: %s: %s\n", path, strerror(errno));
		return NULL;
	}
	for (;;) {
		size_t got;

		if (!data || len == cap) {
			cap = data ? 2 * cap : cap;
			bigger = realloc(data, cap + 1);
			if (!bigger) {
				fprintf(stderr, "asyncelt-dump: %s: out of memory\n", path);
				free(data);
				data = NULL;
				break;
			}
			data = bigger;
		}
		got = fread(data + len, 1, cap - len, f);
		len += got;
		if (got == 0) {
			if (ferror(f)) {
				fprintf(stderr, "asyncelt-dump: %s: %s\n", path, strerror(errno));
				free(data);
				data = NULL;
			}
			break;
		}
	}
	if (f != stdin)
		fclose(f);
	if (data) {
		data[len] = '\0';       /* the trace reader wants text */
		*size = len;
	}
	return data;
}

static int parse_number(const char *option, const char *text, unsigned long long *out)
{
	char *end;

	/* digits only: strtoull would take "-5" as 2^64 - 5 */
	errno = 0;
	*out = text && *text >= '0' && *text <= '9' ? strtoull(text, &end, 10) : 0;
	if (!text || *text < '0' || *text > '9' || *end || errno) {
		fprintf(stderr, "asyncelt-dump: %s wants a number, not \"%s\"\n", option,
			text ? text : "");
		return 0;
	}
	return 1;
}

static bool looks_like_json(const char *data, size_t size)
{
	size_t i;

	for (i = 0; i < size && (data[i] == ' ' || data[i] == '\n' || data[i] == '\t' ||
				 data[i] == '\r'); i++)
		;
	return i < size && (data[i] == '[' || data[i] == '{');
}

int main(int argc, char **argv)
{
	struct svg_selection sel = { .top = 200, .width = 1200 };
	enum view view = TEXT;
	const char *output = NULL;
	struct dump_file *files;
	const char **paths;
	char **buffers;
	size_t nfiles = 0, i, j;
	struct model m;
	bool have_model = false, from_trace = false;
	const char *svg_only = NULL;    /* an option of --svg's, if one was given */
	unsigned long long to_us = ULLONG_MAX;  /* --to; none: the end */
	int status = 0, a;
	FILE *out = stdout;

	files = calloc((size_t)argc, sizeof(*files));
	buffers = calloc((size_t)argc, sizeof(*buffers));
	paths = calloc((size_t)argc, sizeof(*paths));
	if (!files || !buffers || !paths) {
		fprintf(stderr, "asyncelt-dump: out of memory\n");
		free(files);
		free(buffers);
		free(paths);
		return 1;
	}
	/* Every exit from here on goes through done: nothing leaks. */
	status = 2;     /* a usage error, until the arguments are read */
	for (a = 1; a < argc; a++) {
		const char *arg = argv[a];
		unsigned long long v;

		if (!strcmp(arg, "-h") || !strcmp(arg, "--help")) {
			fputs(usage, stdout);
			status = 0;
			goto done;
		} else if (!strcmp(arg, "--text")) {
			view = TEXT;
		} else if (!strcmp(arg, "--jsonl")) {
			view = JSONL;
		} else if (!strcmp(arg, "--chrome")) {
			view = CHROME;
		} else if (!strcmp(arg, "--summary")) {
			view = SUMMARY;
		} else if (!strcmp(arg, "--svg")) {
			view = SVG;
		} else if (!strcmp(arg, "-o") || !strcmp(arg, "--output")) {
			if (!(output = argv[++a])) {
				fprintf(stderr, "asyncelt-dump: %s needs a file name\n", arg);
				goto done;
			}
		} else if (!strcmp(arg, "--function")) {
			if (!(sel.function = argv[++a])) {
				fprintf(stderr, "asyncelt-dump: --function needs a name\n");
				goto done;
			}
			svg_only = arg;
		} else if (!strcmp(arg, "--from") || !strcmp(arg, "--to") ||
			   !strcmp(arg, "--top") || !strcmp(arg, "--width")) {
			if (!parse_number(arg, argv[++a], &v))
				goto done;
			svg_only = arg;
			if (!strcmp(arg, "--from") || !strcmp(arg, "--to")) {
				if (v > UINT64_MAX / 1000) {
					fprintf(stderr, "asyncelt-dump: %s: %llu us is out of range\n",
						arg, v);
					goto done;
				}
				if (!strcmp(arg, "--from"))
					sel.from_ns = v * 1000;
				else
					to_us = v;
			} else if (!strcmp(arg, "--top")) {
				sel.top = v > UINT32_MAX ? UINT32_MAX : (uint32_t)v;
			} else if (v < 100 || v > 100000) {
				fprintf(stderr, "asyncelt-dump: --width: 100 to 100000 pixels\n");
				goto done;
			} else {
				sel.width = (unsigned)v;
			}
		} else if (arg[0] == '-' && arg[1]) {
			fprintf(stderr, "asyncelt-dump: unknown option %s (see --help)\n", arg);
			goto done;
		} else {
			paths[nfiles++] = arg;
		}
	}
	if (!nfiles) {
		fprintf(stderr, "asyncelt-dump: no FILE to read (see --help)\n");
		goto done;
	}
	if (svg_only && view != SVG) {
		fprintf(stderr, "asyncelt-dump: %s selects what --svg draws; the other "
			"views show everything\n", svg_only);
		goto done;
	}
	if (to_us != ULLONG_MAX) {
		if (to_us * 1000 <= sel.from_ns) {
			fprintf(stderr, "asyncelt-dump: --to %llu us is not after --from %llu us\n",
				to_us, (unsigned long long)(sel.from_ns / 1000));
			goto done;
		}
		sel.to_ns = to_us * 1000;
	}
	status = 0;
	for (i = 0; i < nfiles && status == 0; i++) {
		const char *path = paths[i];
		char error[512];
		size_t size = 0;

		buffers[i] = read_whole(path, &size);
		if (!buffers[i]) {
			status = 1;
			break;
		}
		if (view == SVG && nfiles == 1 && looks_like_json(buffers[i], size)) {
			from_trace = true;
			if (!model_from_chrome_trace(&m, buffers[i], size, error, sizeof(error))) {
				fprintf(stderr, "asyncelt-dump: %s: %s\n", path, error);
				status = 1;
			}
			have_model = status == 0;
			break;
		}
		if (dump_parse(buffers[i], size, path, &files[i], error, sizeof(error)) != ELT_OK) {
			fprintf(stderr, "asyncelt-dump: %s\n", error);
			status = 1;
			break;
		}
		for (j = 0; j < i; j++)
			if (files[j].pid == files[i].pid && files[j].base_ns == files[i].base_ns)
				break;
		if (j < i) {
			fprintf(stderr, "asyncelt-dump: %s and %s are the same recording (pid %ld, "
				"base %llu): merged, each of its events would count twice\n",
				paths[j], path, files[i].pid,
				(unsigned long long)files[i].base_ns);
			status = 1;
			break;
		}
		if (files[i].truncated)
			fprintf(stderr, "asyncelt-dump: warning: %s is cut short at offset %zu "
				"of %zu (the process was killed?): read its %zu whole segment records\n",
				path, files[i].whole_bytes, size, files[i].nevents);
		if (!files[i].closed && files[i].version >= 4)
			fprintf(stderr, "asyncelt-dump: warning: %s was never closed: its process "
				"ended without shutting the library down (killed, abort, _exit or a "
				"crash), so what its threads still held in their buffers is lost\n",
				path);
	}
	if (status == 0 && !from_trace && view != TEXT && view != JSONL) {
		if (!model_from_recordings(&m, files, nfiles)) {
			fprintf(stderr, "asyncelt-dump: out of memory\n");
			status = 1;
		}
		have_model = status == 0;
	}
	/* "wb": the golden SVG is the same bytes on Windows too */
	if (status == 0 && output && view != CHROME && !(out = fopen(output, "wb"))) {
		fprintf(stderr, "asyncelt-dump: %s: %s\n", output, strerror(errno));
		status = 1;
	}
	if (status == 0) {
		switch (view) {
		case TEXT:
		case JSONL:
			output_lines(out, files, nfiles, view == JSONL);
			break;
		case CHROME:
			status = output_chrome(output ? output : "-", &m) ? 0 : 1;
			break;
		case SUMMARY:
			output_summary(out, &m);
			break;
		case SVG:
			output_svg(out, &m, &sel);
			break;
		}
		if (out != stdout ? fclose(out) != 0 : fflush(out) != 0) {
			fprintf(stderr, "asyncelt-dump: writing the output failed: %s\n",
				strerror(errno));
			status = 1;
		}
	}
done:   /* files[] and buffers[] are zeroed where nothing was read */
	if (have_model)
		model_free(&m);
	for (i = 0; i < nfiles; i++) {
		dump_file_free(&files[i]);
		free(buffers[i]);
	}
	free(paths);
	free(files);
	free(buffers);
	return status;
}
