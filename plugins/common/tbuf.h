/*
 * Per-thread output buffers for plugins that write a record per segment
 * (logging, the timing plugin's trace).  Shared by those plugins, compiled
 * into each.
 *
 * Each thread appends whole lines to its own buffer, reached through one
 * initial-exec TLS pointer: no lock, no allocation, no system call on the
 * hot path.  A full buffer is written out with one write(2) of complete
 * lines on an O_APPEND descriptor (the rare slow step), so lines of
 * different threads never interleave and nothing is dropped.  Buffers are
 * written out at thread exit (tbuf_thread_exit, from the plugin's
 * thread_exit), by tbuf_close (fini) and, for the forking thread, before
 * fork; a fork child discards what it inherited and writes its own file
 * when the path holds %p (or see tbuf_file_per_process).
 *
 * Each thread also gets `user_size` bytes of the plugin's own per-thread
 * data next to its buffer (zeroed when first handed out; kept when a
 * buffer passes to a new thread after the old one exited).
 */
#ifndef ELT_PLUGINS_TBUF_H
#define ELT_PLUGINS_TBUF_H

#include <asyncelt.h>

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

struct tbuf_set;        /* one per plugin instance: the file, every buffer */

/* One per thread and set.  The appenders below are inline, so that a line
 * made of many short pieces costs a few instructions a piece; only
 * tbuf.c and the inline lookups below touch the fields after
 * `line_start`. */
struct tbuf {
	char *data;
	size_t len;                     /* bytes in data */
	size_t capacity;
	size_t line_start;              /* data[0 .. line_start) is whole lines */
	unsigned long writes;           /* times the thread's bytes went to the
					   file (or were dropped in a fork
					   child): a writer whose records depend
					   on the ones before checks it
					   (logging's binary) */
	unsigned long process;          /* tbuf_process() */
	struct tbuf_set *set;
	struct tbuf *next_all;          /* every buffer of the set */
	struct tbuf *next_here;         /* this thread's buffers of other sets */
	int in_use;                     /* a live thread owns it */
	unsigned long owner;            /* its serial (tbuf.c), while in use */
	void *user;
};

#define TBUF_DEFAULT_CAPACITY (64 * 1024)
#define TBUF_MIN_CAPACITY 64
#define TBUF_MAX_CAPACITY (1u << 30)    /* a thread's: 1 GiB */

/* Where a set writes: `path` is a file, created or truncated ("%p" in it is
 * the pid), TBUF_STDERR, or NULL for no output at all (the set then only
 * keeps the per-thread user data).  `header` (may be NULL) is written
 * first, and again at the top of a fork child's own file (a "%p" in it is
 * the pid too); `footer` (may be NULL) last, by tbuf_close.  `option` names
 * the option in errors: ELT_E_IO "output: cannot write PATH: REASON". */
extern const char tbuf_stderr[];
#define TBUF_STDERR tbuf_stderr
elt_status tbuf_open(struct tbuf_set **out, const char *option, const char *path,
		     size_t capacity, size_t user_size, const char *header,
		     const char *footer);
/* The set's file makes sense only as one process's (a binary recording,
 * a JSON trace): a fork child then writes its own file even without %p in
 * the path, the path with ".PID" appended, unless the file is no regular
 * one (a device, a pipe), which the child writes on too.  Call it right
 * after tbuf_open. */
void tbuf_file_per_process(struct tbuf_set *set);
/* Whether this process opened the set's file: false in a fork child that
 * writes on its parent's. */
bool tbuf_own_file(const struct tbuf_set *set);
/* Writes every buffer out, the footer, closes the file.  ELT_E_IO, with a
 * message, when a write failed at any time. */
elt_status tbuf_close(struct tbuf_set *set);

/* This thread's buffers, one per set it wrote to: initial-exec TLS (a
 * pointer here, two words more in tbuf.c), so an access is one
 * instruction and never allocates, even in a dlopen()ed plugin. */
#if defined(_WIN32)
# define TBUF_TLS __thread
#else
# define TBUF_TLS __thread __attribute__((tls_model("initial-exec")))
#endif
extern TBUF_TLS struct tbuf *tbuf_here;

/* This thread's buffer if it has one, else NULL: never allocates. */
static inline struct tbuf *tbuf_peek(struct tbuf_set *set)
{
	struct tbuf *b;

	for (b = tbuf_here; b; b = b->next_here)
		if (b->set == set)
			return b;
	return NULL;
}

/* tbuf_get's slow step: gives this thread a buffer. */
struct tbuf *tbuf_attach(struct tbuf_set *set);

/* This thread's buffer; the first call on a thread allocates it (once per
 * thread: a rare slow step, under the set's lock).  NULL only when out of
 * memory, counted and reported by tbuf_close. */
static inline struct tbuf *tbuf_get(struct tbuf_set *set)
{
	struct tbuf *b = tbuf_peek(set);

	return __builtin_expect(b != NULL, 1) ? b : tbuf_attach(set);
}
/* Calls fn with every buffer's user data, the set's lock held: for fini,
 * when no callback runs. */
void tbuf_foreach_user(struct tbuf_set *set, void (*fn)(void *user, void *arg), void *arg);
/* For the plugin's thread_exit: writes this thread's buffer out and hands
 * it to the next new thread. */
void tbuf_thread_exit(struct tbuf_set *set);

static inline void *tbuf_user(struct tbuf *b)
{
	return b->user;
}
/* getpid() of the process writing the set's file (a fork child's own), in
 * decimal. */
const char *tbuf_pid(const struct tbuf_set *set);
/* Changes with tbuf_pid, in every fork child: what a writer says once per
 * process (a trace's thread names) it says again when this changed.
 * Inline, read on every record that may be a thread's first. */
static inline unsigned long tbuf_process(const struct tbuf *b)
{
	return b->process;
}

/* Appending to the current line.  A piece that does not fit calls
 * tbuf_put_slow, which writes whole lines out to make room. */
void tbuf_put_slow(struct tbuf *b, const char *s, size_t n);

static inline void tbuf_put(struct tbuf *b, const char *s, size_t n)
{
	if (__builtin_expect(n > b->capacity - b->len, 0)) {
		tbuf_put_slow(b, s, n);
		return;
	}
	memcpy(b->data + b->len, s, n);
	b->len += n;
}

/* Room for n more bytes in one piece, at data + len: true at once when
 * there is, else whole lines are written out first.  False when n is
 * more than the buffer holds after that (the caller then appends in
 * pieces with tbuf_put, which splits). */
bool tbuf_reserve_slow(struct tbuf *b, size_t n);

static inline bool tbuf_reserve(struct tbuf *b, size_t n)
{
	return __builtin_expect(n <= b->capacity - b->len, 1) || tbuf_reserve_slow(b, n);
}

/* Inline, so a literal's length is known when it is compiled. */
static inline void tbuf_put_str(struct tbuf *b, const char *s)
{
	tbuf_put(b, s, strlen(s));
}

static inline void tbuf_put_char(struct tbuf *b, char c)
{
	tbuf_put(b, &c, 1);
}

void tbuf_put_u64(struct tbuf *b, uint64_t v);
void tbuf_put_hex(struct tbuf *b, uint64_t v);         /* 0x... */
/* t's value at data, rendered by elt_format_value.  A value longer than
 * the whole buffer is cut, and "..." marks the cut (in JSON, the whole
 * value is the string "..."). */
void tbuf_put_value(struct tbuf *b, const elt_type *t, const void *data,
		    unsigned flags);
/* A string escaped for a JSON string's contents (no quotes added). */
void tbuf_put_json_str(struct tbuf *b, const char *s);
/* Ends the line: what was appended since the last end is now whole. */
static inline void tbuf_end_line(struct tbuf *b)
{
	tbuf_put_char(b, '\n');
	b->line_start = b->len;
}

/* Appends a whole line, its '\n' included, at a line's start: one longer
 * than the whole buffer goes to the file in one write, never in pieces
 * another thread's write could separate. */
static inline void tbuf_put_line(struct tbuf *b, const char *s, size_t n)
{
	tbuf_put(b, s, n);
	b->line_start = b->len;
}

/* The pid in text, as %p expands (for the plugins' own report files). */
void tbuf_expand_path(char *dst, size_t size, const char *pattern);

#endif
