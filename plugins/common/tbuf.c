/*
 * Per-thread output buffers: see tbuf.h for what they promise.
 */
#include "tbuf.h"
#include "fork-signals.h"
#include "pages.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#ifndef O_BINARY
# define O_BINARY 0     /* Windows: no "\r\n" translation */
#endif

struct tbuf_set {
	int fd;
	bool close_fd;
	bool to_stderr;
	size_t capacity;
	size_t user_size;
	char *pattern;                  /* the path as given, for a fork child */
	bool whole_per_process;         /* tbuf_file_per_process() */
	bool regular_file;              /* the file open is one (not a device) */
	bool pid_suffix;                /* this fork child's file: pattern.PID */
	bool own_file;                  /* this process opened the file */
	char *header, *footer;
	char pid_text[24];              /* getpid(), refreshed in a fork child */
	unsigned long process;          /* forks, here: each buffer's copy is
					   its tbuf_process() */
	pthread_mutex_t lock;           /* `all` and in_use: attach and exit only */
	struct tbuf *all;
	struct tbuf_set *next_set;      /* sets_list */
	_Atomic int write_errno;        /* the first write failure */
	_Atomic uint64_t lost_bytes;    /* bytes a failed write could not write */
	_Atomic uint64_t no_memory;     /* threads that got no buffer */
};

/*
 * A thread's buffers, one per set it wrote to.  The list may still link a
 * buffer of a set that another thread's fini closed, and so unmapped.  It
 * is walked by this thread's callbacks (tbuf_get, thread_exit), none of
 * which runs once a fini has (the library stops every plugin first), and
 * by tbuf_close() on the thread that runs the fini, which unlinked its own
 * buffer of each set it closed.  The fork handlers, which may run on any
 * thread at any time, find the forking thread's buffers among the open
 * sets' instead, by their owner.
 */
TBUF_TLS struct tbuf *tbuf_here;
/* This thread's serial, from its first buffer: unique, unlike its TLS
 * address, which a later thread may get. */
static TBUF_TLS unsigned long thread_serial;
static _Atomic unsigned long serials;

const char tbuf_stderr[] = "stderr";

/* Every open set, for the fork handlers (registered once per module). */
static pthread_mutex_t sets_lock = PTHREAD_MUTEX_INITIALIZER;
static struct tbuf_set *sets_list;
static pthread_once_t atfork_once = PTHREAD_ONCE_INIT;

/* --- writing out (the slow step) ----------------------------------------- */

/* A signal handler may be what reports the segment that fills a buffer:
 * errno is the interrupted code's, and kept.  Not a cancellation point,
 * as write(2) is: a thread cancelled in it after part of the buffer went
 * out would not learn how much did, and its exit would write all of it
 * again.  (glibc and musl flip a flag of the thread: signal-safe.) */
static void write_all(struct tbuf_set *set, const char *p, size_t n)
{
	int saved_errno = errno, cancel_state;

	pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &cancel_state);
	while (n) {
		ssize_t done = write(set->fd, p, n);

		if (done < 0 && errno == EINTR)
			continue;
		if (done <= 0) {
			int expected = 0;

			atomic_compare_exchange_strong(&set->write_errno, &expected,
						       done < 0 ? errno : EIO);
			atomic_fetch_add(&set->lost_bytes, n);
			break;
		}
		p += done;
		n -= (size_t)done;
	}
	pthread_setcancelstate(cancel_state, NULL);
	errno = saved_errno;
}

/* Writes out data[0 .. upto) in one write(2) and keeps the rest. */
static void flush_upto(struct tbuf *b, size_t upto)
{
	if (!upto)
		return;
	write_all(b->set, b->data, upto);
	b->writes++;
	memmove(b->data, b->data + upto, b->len - upto);
	b->len -= upto;
	b->line_start -= upto < b->line_start ? upto : b->line_start;
}

/* Room for n more bytes: the whole lines go out first; if the line being
 * built is still too long, it goes out unfinished (only a line longer
 * than the buffer is ever split).  Returns the room left. */
static size_t make_room(struct tbuf *b, size_t n)
{
	size_t cap = b->capacity;

	if (n <= cap - b->len)
		return cap - b->len;
	flush_upto(b, b->line_start);
	if (n > cap - b->len) {
		b->line_start = b->len;
		flush_upto(b, b->len);
	}
	return cap - b->len;
}

/* --- appending ----------------------------------------------------------- */

bool tbuf_reserve_slow(struct tbuf *b, size_t n)
{
	if (n <= b->capacity - b->len)
		return true;
	flush_upto(b, b->line_start);
	return n <= b->capacity - b->len;
}

void tbuf_put_slow(struct tbuf *b, const char *s, size_t n)
{
	if (make_room(b, n) < n) {      /* longer than the whole buffer */
		write_all(b->set, s, n);
		b->writes++;
		return;
	}
	memcpy(b->data + b->len, s, n);
	b->len += n;
}

void tbuf_put_u64(struct tbuf *b, uint64_t v)
{
	/* two digits per division: trace events are mostly numbers */
	static const char pairs[] =
		"00010203040506070809101112131415161718192021222324252627282930313233"
		"34353637383940414243444546474849505152535455565758596061626364656667"
		"6869707172737475767778798081828384858687888990919293949596979899";
	char digits[20];
	size_t at = sizeof(digits);

	while (v >= 100) {
		unsigned pair = (unsigned)(v % 100);

		v /= 100;
		at -= 2;
		memcpy(digits + at, pairs + 2 * pair, 2);
	}
	if (v >= 10) {
		at -= 2;
		memcpy(digits + at, pairs + 2 * v, 2);
	} else {
		digits[--at] = (char)('0' + v);
	}
	tbuf_put(b, digits + at, sizeof(digits) - at);
}

void tbuf_put_hex(struct tbuf *b, uint64_t v)
{
	static const char hex[] = "0123456789abcdef";
	char text[18];
	size_t at = sizeof(text);

	do {
		text[--at] = hex[v & 0xf];
		v >>= 4;
	} while (v);
	text[--at] = 'x';
	text[--at] = '0';
	tbuf_put(b, text + at, sizeof(text) - at);
}

void tbuf_put_value(struct tbuf *b, const elt_type *t, const void *data,
		    unsigned flags)
{
	size_t cap = b->capacity;
	size_t need = elt_format_value(t, data, flags, b->data + b->len, cap - b->len);

	/* elt_format_value needs room for its NUL too: fits when need < room */
	if (need >= cap - b->len) {
		make_room(b, need + 1);
		need = elt_format_value(t, data, flags, b->data + b->len, cap - b->len);
	}
	if (need < cap - b->len) {
		b->len += need;
		return;
	}
	/* Longer than the whole buffer.  JSON cut anywhere is no JSON: the
	 * value is the string "..." there; text keeps what fits. */
	if (flags & ELT_FORMAT_JSON) {
		tbuf_put_str(b, "\"...\"");
		return;
	}
	b->len = cap - 4;
	memcpy(b->data + b->len, "...", 3);
	b->len += 3;
}

void tbuf_put_json_str(struct tbuf *b, const char *s)
{
	static const char hex[] = "0123456789abcdef";
	const char *run = s;

	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;
		char esc[6] = { '\\', 'u', '0', '0', hex[c >> 4], hex[c & 0xf] };

		if (c >= 0x20 && c != '"' && c != '\\')
			continue;
		tbuf_put(b, run, (size_t)(s - run));
		run = s + 1;
		if (c == '"' || c == '\\') {
			tbuf_put_char(b, '\\');
			tbuf_put_char(b, (char)c);
		} else {
			tbuf_put(b, esc, sizeof(esc));
		}
	}
	tbuf_put(b, run, (size_t)(s - run));
}

const char *tbuf_pid(const struct tbuf_set *set)
{
	return set->pid_text;
}

static void set_pid(struct tbuf_set *set)
{
	snprintf(set->pid_text, sizeof(set->pid_text), "%ld", (long)getpid());
}

/* --- per thread ---------------------------------------------------------- */

/* A buffer's whole size: its header, the user data, the bytes. */
static size_t buffer_size(const struct tbuf_set *set)
{
	return ((sizeof(struct tbuf) + 15) & ~(size_t)15) +
	       ((set->user_size + 15) & ~(size_t)15) + set->capacity;
}

/* A free buffer of the set, or a new one (the set's lock is held). */
static struct tbuf *take_buffer(struct tbuf_set *set)
{
	struct tbuf *b;
	size_t head = (sizeof(*b) + 15) & ~(size_t)15;
	size_t user = (set->user_size + 15) & ~(size_t)15;

	for (b = set->all; b; b = b->next_all)
		if (!b->in_use)
			return b;
	b = pages_map(buffer_size(set));        /* pages.h: not malloc */
	if (!b)
		return NULL;
	b->set = set;
	b->capacity = set->capacity;
	b->user = (char *)b + head;
	b->data = (char *)b + head + user;
	b->next_all = set->all;
	set->all = b;
	return b;
}

/* The set this thread last got no buffer from: it does not try again at
 * every record, a lock and a mapping each, and is counted once. */
static TBUF_TLS const struct tbuf_set *refused_here;

struct tbuf *tbuf_attach(struct tbuf_set *set)
{
	struct tbuf *b;

	if (refused_here == set)
		return NULL;
	/* The thread's first record for this set: the rare slow step. */
	if (!thread_serial)
		thread_serial = atomic_fetch_add(&serials, 1) + 1;
	pthread_mutex_lock(&set->lock);
	b = take_buffer(set);
	if (b) {
		b->in_use = 1;
		b->owner = thread_serial;
		b->process = set->process;
	}
	pthread_mutex_unlock(&set->lock);
	if (!b) {
		refused_here = set;
		atomic_fetch_add(&set->no_memory, 1);
		return NULL;
	}
	b->next_here = tbuf_here;
	tbuf_here = b;
	return b;
}

void tbuf_thread_exit(struct tbuf_set *set)
{
	struct tbuf **link, *b;

	for (link = &tbuf_here; (b = *link); link = &b->next_here)
		if (b->set == set)
			break;
	if (!b)
		return;         /* this thread never wrote to the set */
	*link = b->next_here;
	b->line_start = b->len;
	flush_upto(b, b->len);
	pthread_mutex_lock(&set->lock);
	b->in_use = 0;
	pthread_mutex_unlock(&set->lock);
}

void tbuf_foreach_user(struct tbuf_set *set, void (*fn)(void *user, void *arg), void *arg)
{
	struct tbuf *b;

	pthread_mutex_lock(&set->lock);
	for (b = set->all; b; b = b->next_all)
		fn(b->user, arg);
	pthread_mutex_unlock(&set->lock);
}

/* --- files and fork ------------------------------------------------------ */

void tbuf_expand_path(char *dst, size_t size, const char *pattern)
{
	size_t at = 0;

	for (; *pattern && at + 1 < size; pattern++) {
		if (pattern[0] == '%' && pattern[1] == 'p') {
			at += (size_t)snprintf(dst + at, size - at, "%ld", (long)getpid());
			if (at >= size)
				at = size - 1;
			pattern++;
		} else {
			dst[at++] = *pattern;
		}
	}
	dst[at] = '\0';
}

/* Opens the set's file for this process and writes the header. */
static elt_status open_output(struct tbuf_set *set, const char *option)
{
	char path[4096];

	set_pid(set);
	if (!set->pattern) {
		set->fd = set->to_stderr ? 2 : -1;
		set->close_fd = false;
		if (!set->to_stderr)
			return ELT_OK;
	} else {
		struct stat st;

		tbuf_expand_path(path, sizeof(path), set->pattern);
		if (set->pid_suffix) {
			size_t len = strlen(path);

			snprintf(path + len, sizeof(path) - len, ".%s", set->pid_text);
		}
		set->fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_BINARY, 0666);
		if (set->fd < 0)
			return elt_set_error(ELT_E_IO, "%s: cannot write %s: %s",
					     option, path, strerror(errno));
		set->close_fd = true;
		set->own_file = true;
		set->regular_file = fstat(set->fd, &st) == 0 && S_ISREG(st.st_mode);
	}
	if (set->header) {
		/* the header may name the process: %p is the pid there too */
		char text[1024];

		tbuf_expand_path(text, sizeof(text), set->header);
		write_all(set, text, strlen(text));
	}
	return ELT_OK;
}

/* The forking thread's signal mask, restored after (fork-signals.h);
 * under sets_lock. */
static fork_signal_mask fork_signals;

/* The forking thread's buffer of an open set (its lock held), or NULL. */
static struct tbuf *forking_threads(const struct tbuf_set *set)
{
	struct tbuf *b;

	for (b = set->all; b && thread_serial; b = b->next_all)
		if (b->in_use && b->owner == thread_serial)
			return b;
	return NULL;
}

static void before_fork(void)
{
	fork_signal_mask signals;
	struct tbuf_set *set;
	struct tbuf *b;

	fork_signals_block(&signals);
	pthread_mutex_lock(&sets_lock);
	fork_signals = signals;
	for (set = sets_list; set; set = set->next_set) {
		pthread_mutex_lock(&set->lock);
		/* this thread's whole lines go out once, from the parent */
		if ((b = forking_threads(set)))
			flush_upto(b, b->line_start);
	}
}

static void after_fork_parent(void)
{
	fork_signal_mask signals = fork_signals;
	struct tbuf_set *set;

	for (set = sets_list; set; set = set->next_set)
		pthread_mutex_unlock(&set->lock);
	pthread_mutex_unlock(&sets_lock);
	fork_signals_restore(&signals);
}

/* A fork child writes a file of its own when the name has %p, or when
 * the set's file is whole only as one process's (tbuf_file_per_process)
 * and a second writer would spoil a regular file; a device or a pipe is
 * written on by the child too. */
static bool child_opens_own_file(const struct tbuf_set *set)
{
	return set->pattern && (strstr(set->pattern, "%p") ||
				(set->whole_per_process && set->regular_file));
}

/* The child has one thread: the other threads' buffers hold the parent's
 * lines, which the parent writes; they are emptied and free for reuse. */
static void after_fork_child(void)
{
	fork_signal_mask signals = fork_signals;
	struct tbuf_set *set;
	struct tbuf *b, *mine;

	for (set = sets_list; set; set = set->next_set) {
		mine = forking_threads(set);
		for (b = set->all; b; b = b->next_all) {
			if (b == mine)
				continue;
			b->len = b->line_start = 0;
			b->writes++;
			b->in_use = 0;
		}
		if (child_opens_own_file(set)) {
			if (set->close_fd)
				close(set->fd);
			set->pid_suffix = !strstr(set->pattern, "%p");
			if (open_output(set, "output") != ELT_OK)
				set->fd = -1;   /* writes fail and are counted */
		} else {
			set->own_file = false;
			set_pid(set);
		}
		set->process++;
		if (mine)       /* the others are taken again, with the count */
			mine->process = set->process;
		pthread_mutex_unlock(&set->lock);
	}
	pthread_mutex_unlock(&sets_lock);
	fork_signals_restore(&signals);
}

static void register_atfork(void)
{
#if !defined(_WIN32)    /* no fork there */
	pthread_atfork(before_fork, after_fork_parent, after_fork_child);
#else
	(void)before_fork;
	(void)after_fork_parent;
	(void)after_fork_child;
#endif
}

static char *copy_or_null(const char *s, bool *failed)
{
	char *copy;

	if (!s)
		return NULL;
	copy = strdup(s);
	if (!copy)
		*failed = true;
	return copy;
}

static void free_set(struct tbuf_set *set)
{
	struct tbuf *b, *next;

	for (b = set->all; b; b = next) {
		next = b->next_all;
		pages_unmap(b, buffer_size(set));
	}
	free(set->pattern);
	free(set->header);
	free(set->footer);
	pthread_mutex_destroy(&set->lock);
	free(set);
}

elt_status tbuf_open(struct tbuf_set **out, const char *option, const char *path,
		     size_t capacity, size_t user_size, const char *header,
		     const char *footer)
{
	struct tbuf_set *set = calloc(1, sizeof(*set));
	bool failed = false;
	elt_status st;

	if (capacity > TBUF_MAX_CAPACITY) {
		free(set);
		return elt_set_error(ELT_E_INVALID_ARGUMENT,
				     "a buffer of %zu bytes is more than %u", capacity,
				     TBUF_MAX_CAPACITY);
	}
	if (!set)
		return elt_set_error(ELT_E_NO_MEMORY, "out of memory");
	pthread_mutex_init(&set->lock, NULL);
	set->capacity = capacity < TBUF_MIN_CAPACITY ? TBUF_MIN_CAPACITY : capacity;
	set->user_size = user_size;
	set->to_stderr = path == TBUF_STDERR;
	set->pattern = path == TBUF_STDERR ? NULL : copy_or_null(path, &failed);
	set->header = copy_or_null(header, &failed);
	set->footer = copy_or_null(footer, &failed);
	st = failed ? elt_set_error(ELT_E_NO_MEMORY, "out of memory")
		    : open_output(set, option);
	if (st != ELT_OK) {
		free_set(set);
		return st;
	}
	pthread_once(&atfork_once, register_atfork);
	pthread_mutex_lock(&sets_lock);
	set->next_set = sets_list;
	sets_list = set;
	pthread_mutex_unlock(&sets_lock);
	*out = set;
	return ELT_OK;
}

void tbuf_file_per_process(struct tbuf_set *set)
{
	pthread_mutex_lock(&set->lock);
	set->whole_per_process = true;
	pthread_mutex_unlock(&set->lock);
}

bool tbuf_own_file(const struct tbuf_set *set)
{
	return set->own_file;
}

elt_status tbuf_close(struct tbuf_set *set)
{
	struct tbuf_set **link;
	struct tbuf *b;
	elt_status st = ELT_OK;
	int err;

	pthread_mutex_lock(&sets_lock);
	for (link = &sets_list; *link; link = &(*link)->next_set)
		if (*link == set) {
			*link = set->next_set;
			break;
		}
	pthread_mutex_unlock(&sets_lock);

	/* No callback runs now (fini): every thread's lines can go out. */
	for (b = set->all; b; b = b->next_all) {
		b->line_start = b->len;
		flush_upto(b, b->len);
	}
	/* Unlink this thread's buffer, so a later set never meets it. */
	tbuf_thread_exit(set);
	if (refused_here == set)
		refused_here = NULL;
	if (set->footer)
		write_all(set, set->footer, strlen(set->footer));
	if (set->close_fd && close(set->fd) != 0) {
		int expected = 0;

		atomic_compare_exchange_strong(&set->write_errno, &expected, errno);
	}
	err = atomic_load(&set->write_errno);
	if (err)
		st = elt_set_error(ELT_E_IO, "writing the output failed: %s (%llu bytes lost)",
				   strerror(err),
				   (unsigned long long)atomic_load(&set->lost_bytes));
	else if (atomic_load(&set->no_memory))
		st = elt_set_error(ELT_E_NO_MEMORY, "%llu threads got no output buffer",
				   (unsigned long long)atomic_load(&set->no_memory));
	free_set(set);
	return st;
}
