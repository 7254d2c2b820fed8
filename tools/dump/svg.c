/*
 * The invocation timeline: one row per logical invocation, from its
 * initial call to its final return, grouped by function and sorted by
 * start, the invocations it called indented under it; its segments are
 * bars colored by the thread that ran them, its suspensions a thin line,
 * a hop to another thread a mark.  Below, one lane per thread shows whose
 * segment it was running.  Plain SVG 1.1 with <title> tooltips: no script,
 * no external font, the same bytes for the same model.
 *
 * Big recordings stay drawable: rows are limited (--top, --function, a
 * time window), and segments that would share a pixel are drawn as one
 * bar that says how many it holds (data-segments), so the output grows
 * with the picture's width, not with the number of segments.
 */
#include "output.h"

#include <stdlib.h>
#include <string.h>

#define LABEL_W 260     /* the name column */
#define ROW_H 16
#define BAR_H 10
#define INDENT 10       /* per nesting level */
#define MAX_DEPTH 16    /* deeper rows are drawn at this indent */
#define TOP 40          /* title and axis */
#define MAX_LANES 64    /* thread lanes drawn */

/* Colorblind-friendly (Okabe-Ito and Tableau-like), threads by index. */
static const char *const palette[] = {
	"#0072b2", "#e69f00", "#009e73", "#cc79a7", "#56b4e9", "#d55e00",
	"#f0e442", "#7f7f7f", "#8c564b", "#17becf",
};
#define NCOLORS (sizeof(palette) / sizeof(palette[0]))

struct view {
	FILE *out;
	const struct model *m;
	uint64_t from, to;              /* the window, ns */
	double scale;                   /* px per ns */
	unsigned width;
};

static double x_of(const struct view *v, uint64_t t)
{
	if (t < v->from)
		t = v->from;
	if (t > v->to)
		t = v->to;
	return LABEL_W + (double)(t - v->from) * v->scale;
}

static void put_escaped(FILE *out, const char *s)
{
	for (; *s; s++) {
		switch (*s) {
		case '<': fputs("&lt;", out); break;
		case '>': fputs("&gt;", out); break;
		case '&': fputs("&amp;", out); break;
		case '"': fputs("&quot;", out); break;
		default:
			if ((unsigned char)*s >= 0x20)
				fputc(*s, out);
		}
	}
}

/* "12.5 ms": a duration in the unit that suits it. */
static void format_duration(char *buf, size_t size, double ns)
{
	if (ns >= 1e9)
		snprintf(buf, size, "%.6g s", ns / 1e9);
	else if (ns >= 1e6)
		snprintf(buf, size, "%.6g ms", ns / 1e6);
	else if (ns >= 1e3)
		snprintf(buf, size, "%.6g us", ns / 1e3);
	else
		snprintf(buf, size, "%.6g ns", ns);
}

/* --- selection ---------------------------------------------------------------- */

struct row {
	uint32_t invocation;
	uint32_t depth;
};

struct selection {
	struct row *rows;
	uint32_t nrows, total;          /* shown, and that matched */
	uint32_t *children, *first_child, *nchildren;
};

static bool in_window(const struct view *v, const struct model_invocation *r)
{
	return r->end >= v->from && r->start <= v->to;
}

/* Whether r, or an invocation it was called from, is NAME's. */
static bool under_function(const struct model *m, uint32_t k, uint32_t fn)
{
	uint32_t hops;

	for (hops = 0; k != MODEL_NONE && hops < 1000; hops++, k = m->invocations[k].parent)
		if (m->invocations[k].function == fn)
			return true;
	return false;
}

static const struct model *sort_model;

static int by_function_then_start(const void *a, const void *b)
{
	const struct model_invocation *x = &sort_model->invocations[*(const uint32_t *)a];
	const struct model_invocation *y = &sort_model->invocations[*(const uint32_t *)b];
	uint32_t xa = *(const uint32_t *)a, ya = *(const uint32_t *)b;

	if (x->function != y->function)
		return x->function < y->function ? -1 : 1;
	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return xa < ya ? -1 : xa > ya;
}

static int by_start(const void *a, const void *b)
{
	const struct model_invocation *x = &sort_model->invocations[*(const uint32_t *)a];
	const struct model_invocation *y = &sort_model->invocations[*(const uint32_t *)b];
	uint32_t xa = *(const uint32_t *)a, ya = *(const uint32_t *)b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return xa < ya ? -1 : xa > ya;
}

/* Rows in tree order: each root, then what it called, depth first.  An
 * explicit stack: a chain of parents can be long (or, in a damaged file,
 * a cycle, which `seen` breaks). */
static void add_tree(struct selection *s, const struct model *m, uint32_t root, uint32_t top,
		     uint32_t *stack, uint32_t *depths, bool *seen)
{
	uint32_t sp = 0;

	stack[sp] = root;
	depths[sp++] = 0;
	while (sp) {
		uint32_t k = stack[--sp], d = depths[sp], c;

		if (seen[k])
			continue;
		seen[k] = true;
		s->total++;
		if (s->nrows < top) {
			s->rows[s->nrows].invocation = k;
			s->rows[s->nrows++].depth = d;
		}
		/* pushed in reverse, so the earliest child comes out first */
		for (c = s->nchildren[k]; c-- > 0;) {
			stack[sp] = s->children[s->first_child[k] + c];
			depths[sp++] = d + 1;
		}
	}
	(void)m;
}

static bool select_rows(struct selection *s, const struct view *v, const char *function,
			uint32_t top)
{
	const struct model *m = v->m;
	uint32_t n = m->ninvocations, k, nroots = 0, fn = MODEL_NONE;
	bool *keep = calloc((size_t)n + 1, sizeof(*keep));
	bool *seen = calloc((size_t)n + 1, sizeof(*seen));
	uint32_t *roots = malloc(((size_t)n + 1) * sizeof(*roots));
	uint32_t *stack = malloc(((size_t)n + 1) * sizeof(*stack));
	uint32_t *depths = malloc(((size_t)n + 1) * sizeof(*depths));
	bool ok;

	memset(s, 0, sizeof(*s));
	s->rows = malloc(((size_t)(top < n ? top : n) + 1) * sizeof(*s->rows));
	s->children = malloc(((size_t)n + 1) * sizeof(*s->children));
	s->first_child = calloc((size_t)n + 1, sizeof(*s->first_child));
	s->nchildren = calloc((size_t)n + 1, sizeof(*s->nchildren));
	ok = keep && seen && roots && stack && depths && s->rows && s->children &&
	     s->first_child && s->nchildren;
	if (ok && function) {
		for (k = 0; k < m->nfunctions; k++)
			if (strcmp(m->functions[k].name, function) == 0)
				fn = k;
	}
	for (k = 0; ok && k < n; k++)
		keep[k] = in_window(v, &m->invocations[k]) &&
			  (!function || under_function(m, k, fn));
	/* children lists (of kept invocations), in start order */
	for (k = 0; ok && k < n; k++) {
		uint32_t p = m->invocations[k].parent;

		if (keep[k] && p != MODEL_NONE && keep[p])
			s->nchildren[p]++;
		else if (keep[k])
			roots[nroots++] = k;
	}
	for (k = 0, n = 0; ok && k < m->ninvocations; k++) {
		s->first_child[k] = n;
		n += s->nchildren[k];
		s->nchildren[k] = 0;
	}
	for (k = 0; ok && k < m->ninvocations; k++) {
		uint32_t p = m->invocations[k].parent;

		if (keep[k] && p != MODEL_NONE && keep[p])
			s->children[s->first_child[p] + s->nchildren[p]++] = k;
	}
	sort_model = m;
	for (k = 0; ok && k < m->ninvocations; k++)
		if (s->nchildren[k] > 1)
			qsort(s->children + s->first_child[k], s->nchildren[k],
			      sizeof(uint32_t), by_start);
	if (ok)
		qsort(roots, nroots, sizeof(*roots), by_function_then_start);
	for (k = 0; ok && k < nroots; k++)
		add_tree(s, m, roots[k], top, stack, depths, seen);
	free(keep);
	free(seen);
	free(roots);
	free(stack);
	free(depths);
	return ok;
}

static void free_selection(struct selection *s)
{
	free(s->rows);
	free(s->children);
	free(s->first_child);
	free(s->nchildren);
}

static int by_value(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

/* --- drawing -------------------------------------------------------------------- */

/*
 * A bar: one segment, or the segments that begin in the same pixel column
 * (or lie inside the bar: nested calls on one thread).  A bar of several
 * is drawn as light as it was idle: its opacity is the busy share of its
 * span, so many short segments never look like one long one.  There are
 * at most as many bars per row or lane as the axis has pixels.
 */
struct bar {
	double x0, x1;
	double busy;                    /* px of segments, summed */
	uint32_t count;
	uint32_t thread;
	uint32_t invocation;            /* of the first */
};

/* Whether a segment at [x0, x1) joins bar b. */
static bool joins(const struct bar *b, double x0, double x1)
{
	return b->count && ((long)x0 == (long)b->x0 || x1 <= b->x1);
}

static void join(struct bar *b, double x0, double x1)
{
	b->x1 = x1 > b->x1 ? x1 : b->x1;
	b->busy += x1 - x0;
	b->count++;
}

static void put_bar(const struct view *v, const struct bar *b, double y, double h,
		    const char *fill, const char *cls)
{
	const struct model *m = v->m;
	const struct model_invocation *r = &m->invocations[b->invocation];
	/* at least a pixel: a 2 us segment on a 20 ms axis stays visible */
	double w = b->x1 - b->x0 < 1.0 ? 1.0 : b->x1 - b->x0;
	double busy = b->busy / w;

	fprintf(v->out, "<rect class=\"%s\" data-segments=\"%u\" x=\"%.1f\" y=\"%.1f\" "
		"width=\"%.1f\" height=\"%.1f\" fill=\"%s\"", cls, b->count, b->x0, y, w, h,
		fill);
	if (b->count > 1 && busy < 1.0)
		fprintf(v->out, " fill-opacity=\"%.2f\"", busy < 0.25 ? 0.25 : busy);
	fputs("><title>", v->out);
	if (b->count == 1) {
		put_escaped(v->out, m->functions[r->function].name);
		fprintf(v->out, " #%llu on thread %u</title></rect>\n",
			(unsigned long long)r->id, b->thread);
	} else {
		fprintf(v->out, "%u segments on thread %u, busy %.0f%%</title></rect>\n",
			b->count, b->thread, busy < 1.0 ? 100.0 * busy : 100.0);
	}
}

static void draw_row(const struct view *v, const struct row *row, unsigned index)
{
	const struct model *m = v->m;
	const struct model_invocation *r = &m->invocations[row->invocation];
	double y = TOP + index * ROW_H, mid = y + ROW_H / 2.0;
	unsigned depth = row->depth < MAX_DEPTH ? row->depth : MAX_DEPTH;
	char wall[32];
	struct bar bar = { 0 };
	uint32_t i, previous_thread = MODEL_NONE, drawn = 0;

	format_duration(wall, sizeof(wall), (double)(r->end - r->start));
	fprintf(v->out, "<g class=\"row\" data-invocation=\"%llu\" data-segments=\"%u\">\n",
		(unsigned long long)r->id, r->nsegments);
	if (index % 2)
		fprintf(v->out, "<rect x=\"0\" y=\"%.1f\" width=\"%u\" height=\"%d\" "
			"fill=\"#f4f4f4\"/>\n", y, LABEL_W + v->width + 10, ROW_H);
	fprintf(v->out, "<text x=\"%u\" y=\"%.1f\">", 4 + depth * INDENT, y + 12);
	put_escaped(v->out, m->functions[r->function].name);
	fprintf(v->out, " #%llu<title>", (unsigned long long)r->id);
	put_escaped(v->out, m->functions[r->function].name);
	fprintf(v->out, " invocation %llu: wall %s, %u segments, %u hops%s</title></text>\n",
		(unsigned long long)r->id, wall, r->nsegments, r->hops,
		r->complete ? "" : ", never returned");
	/* its life: a thin line from the initial call to the final return */
	fprintf(v->out, "<line class=\"life\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"%s/>\n",
		x_of(v, r->start), mid, x_of(v, r->end), mid,
		r->complete ? "" : " stroke-dasharray=\"3,2\"");
	for (i = 0; i < r->nsegments; i++) {
		const struct model_segment *s = &m->segments[m->by_invocation[r->first_segment + i]];
		double x0, x1;

		if (previous_thread != MODEL_NONE && s->thread != previous_thread &&
		    s->start >= v->from && s->start <= v->to)
			fprintf(v->out, "<path class=\"hop\" d=\"M%.1f %.1fl-3 -4h6z\"><title>"
				"hop: thread %u to %u</title></path>\n", x_of(v, s->start),
				y + 2.0, previous_thread, s->thread);
		previous_thread = s->thread;
		if (s->end < v->from || s->start > v->to)
			continue;
		x0 = x_of(v, s->start);
		x1 = x_of(v, s->end);
		if (joins(&bar, x0, x1) && s->thread == bar.thread) {
			join(&bar, x0, x1);
			continue;
		}
		if (bar.count)
			put_bar(v, &bar, mid - BAR_H / 2.0, BAR_H,
				palette[bar.thread % NCOLORS], "seg");
		bar = (struct bar){ x0, x1, x1 - x0, 1, s->thread, row->invocation };
		drawn++;
	}
	if (bar.count)
		put_bar(v, &bar, mid - BAR_H / 2.0, BAR_H, palette[bar.thread % NCOLORS], "seg");
	fputs("</g>\n", v->out);
	(void)drawn;
}

/* The lane of a thread: its index in the sorted `threads`. */
static uint32_t lane_of(const uint32_t *threads, uint32_t nthreads, uint32_t thread)
{
	uint32_t lo = 0, hi = nthreads;

	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (threads[mid] < thread)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* Per thread, whose segments it ran: colored by function.  The segments
 * are bucketed per lane first (in start order), so drawing costs
 * O(segments log threads) however many threads there are; at most
 * MAX_LANES lanes are drawn. */
static void draw_lanes(const struct view *v, double y0, const uint32_t *threads,
		       uint32_t nthreads)
{
	const struct model *m = v->m;
	uint32_t lanes = nthreads < MAX_LANES ? nthreads : MAX_LANES, t;
	size_t *first = calloc((size_t)lanes + 1, sizeof(*first));
	size_t *order = malloc((m->nsegments + 1) * sizeof(*order));
	size_t i;

	if (!first || !order) {
		fprintf(stderr, "asyncelt-dump: out of memory\n");
		free(first);
		free(order);
		return;
	}
	for (i = 0; i < m->nsegments; i++) {
		t = lane_of(threads, nthreads, m->segments[i].thread);
		if (t < lanes)
			first[t + 1]++;
	}
	for (t = 0; t < lanes; t++)
		first[t + 1] += first[t];
	for (i = 0; i < m->nsegments; i++) {
		t = lane_of(threads, nthreads, m->segments[i].thread);
		if (t < lanes)
			order[first[t]++] = i;
	}
	/* first[t] is now the end of lane t: the start is the previous end */
	fprintf(v->out, "<text class=\"h\" x=\"4\" y=\"%.1f\">Threads: whose segment each "
		"ran (colored by function)", y0 - 6);
	if (lanes < nthreads)
		fprintf(v->out, "; %u more threads not shown", nthreads - lanes);
	fputs("</text>\n", v->out);
	for (t = 0; t < lanes; t++) {
		double y = y0 + t * ROW_H;
		struct bar bar = { 0 };

		fprintf(v->out, "<g class=\"lane\" data-thread=\"%u\">\n<text x=\"4\" y=\"%.1f\">"
			"thread %u</text>\n", threads[t], y + 12, threads[t]);
		for (i = t ? first[t - 1] : 0; i < first[t]; i++) {
			const struct model_segment *s = &m->segments[order[i]];
			double x0, x1;

			if (s->end < v->from || s->start > v->to)
				continue;
			x0 = x_of(v, s->start);
			x1 = x_of(v, s->end);
			if (joins(&bar, x0, x1)) {
				join(&bar, x0, x1);
				continue;
			}
			if (bar.count)
				put_bar(v, &bar, y + 2, ROW_H - 4,
					palette[m->invocations[bar.invocation].function % NCOLORS],
					"run");
			bar = (struct bar){ x0, x1, x1 - x0, 1, s->thread, s->invocation };
		}
		if (bar.count)
			put_bar(v, &bar, y + 2, ROW_H - 4,
				palette[m->invocations[bar.invocation].function % NCOLORS], "run");
		fputs("</g>\n", v->out);
	}
	free(first);
	free(order);
}

/* Ticks every 1, 2 or 5 times a power of ten, about ten of them. */
static void draw_axis(const struct view *v, double bottom)
{
	static const unsigned mult[] = { 1, 2, 5 };
	uint64_t span = v->to - v->from, step = span / 10 + 1, power, t;
	unsigned i, ticks;

	for (power = 1; power < UINT64_MAX / 10; power *= 10) {
		for (i = 0; i < 3 && span / (power * mult[i]) > 10; i++)
			;
		if (i < 3) {
			step = power * mult[i];
			break;
		}
	}
	fprintf(v->out, "<line x1=\"%d\" y1=\"%d\" x2=\"%u\" y2=\"%d\" stroke=\"#333\"/>\n",
		LABEL_W, TOP - 4, LABEL_W + v->width, TOP - 4);
	/* time since the window's start: what a reader wants to measure */
	for (t = v->from, ticks = 0; t <= v->to && t >= v->from && ticks <= 20;
	     t += step, ticks++) {
		char label[32];
		double x = x_of(v, t);

		format_duration(label, sizeof(label), (double)(t - v->from));
		fprintf(v->out, "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%.1f\" "
			"stroke=\"#ddd\"/>\n<text class=\"t\" x=\"%.1f\" y=\"%d\">%s</text>\n",
			x, TOP - 4, x, bottom, x, TOP - 8, label);
	}
}

static void draw_legend(const struct view *v, double y, const uint32_t *threads,
			uint32_t nthreads)
{
	double x = 4;
	uint32_t t;

	fprintf(v->out, "<g class=\"legend\">\n");
	fprintf(v->out, "<text x=\"%.1f\" y=\"%.1f\">segments, by thread:</text>\n", x, y + 9);
	x += 150;
	for (t = 0; t < nthreads && t < 32; t++, x += 90)
		fprintf(v->out, "<rect x=\"%.1f\" y=\"%.1f\" width=\"14\" height=\"%d\" "
			"fill=\"%s\"/><text x=\"%.1f\" y=\"%.1f\">thread %u</text>\n", x, y,
			BAR_H, palette[threads[t] % NCOLORS], x + 18, y + 9, threads[t]);
	fprintf(v->out, "<line class=\"life\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>"
		"<text x=\"%.1f\" y=\"%.1f\">suspended</text>\n", x, y + 5, x + 20, y + 5,
		x + 24, y + 9);
	x += 100;
	fprintf(v->out, "<path class=\"hop\" d=\"M%.1f %.1fl-3 -4h6z\"/><text x=\"%.1f\" "
		"y=\"%.1f\">hop to another thread</text>\n", x + 4, y + 6, x + 12, y + 9);
	fputs("</g>\n", v->out);
}

void output_svg(FILE *out, const struct model *m, const struct svg_selection *sel)
{
	struct view v = { .out = out, .m = m, .width = sel->width };
	struct selection s;
	uint32_t *threads, nthreads = 0, i;
	double lanes_y, height;
	size_t k;

	/* by default from the first segment: a recording starts at init,
	 * often well before the first call */
	v.from = sel->from_ns ? sel->from_ns : m->nsegments ? m->segments[0].start : 0;
	v.to = sel->to_ns && sel->to_ns < m->end ? sel->to_ns : m->end;
	if (v.to <= v.from)
		v.to = v.from + 1;
	v.scale = (double)v.width / (double)(v.to - v.from);
	/* the threads that ran something, in order, each once */
	threads = malloc((m->nsegments + 1) * sizeof(*threads));
	if (!threads || !select_rows(&s, &v, sel->function, sel->top)) {
		fprintf(stderr, "asyncelt-dump: out of memory\n");
		free(threads);
		return;
	}
	for (k = 0; k < m->nsegments; k++)
		threads[k] = m->segments[k].thread;
	qsort(threads, m->nsegments, sizeof(*threads), by_value);
	for (k = 0; k < m->nsegments; k++)
		if (!nthreads || threads[nthreads - 1] != threads[k])
			threads[nthreads++] = threads[k];

	lanes_y = TOP + (double)s.nrows * ROW_H + 30;
	height = lanes_y + (double)(nthreads < MAX_LANES ? nthreads : MAX_LANES) * ROW_H + 40;
	fprintf(out, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
		"<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%u\" height=\"%.0f\" "
		"viewBox=\"0 0 %u %.0f\" font-family=\"DejaVu Sans Mono, monospace\" "
		"font-size=\"11\">\n", LABEL_W + v.width + 10, height, LABEL_W + v.width + 10,
		height);
	fputs("<style>.life{stroke:#555;stroke-width:1}.hop{fill:#d00}"
	      ".t{text-anchor:middle;fill:#333}.h{font-weight:bold}</style>\n"
	      "<rect width=\"100%\" height=\"100%\" fill=\"#fff\"/>\n", out);
	fprintf(out, "<text class=\"h\" x=\"4\" y=\"14\">Logical invocations: %u of %u shown"
		" (rows: function #invocation; bars: segments; line: suspended)</text>\n",
		s.nrows, s.total);
	draw_axis(&v, height - 34);
	for (i = 0; i < s.nrows; i++)
		draw_row(&v, &s.rows[i], i);
	draw_lanes(&v, lanes_y, threads, nthreads);
	draw_legend(&v, height - 22, threads, nthreads);
	fputs("</svg>\n", out);
	free_selection(&s);
	free(threads);
}
