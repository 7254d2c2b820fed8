/*
 * Reading a binary recording (plugins/logging/recording.h) from memory:
 * its preamble, function table and events, checked record by record.
 * No I/O here, so that the fuzzer (tests/fuzz/fuzz-dump.c) and the
 * command both call dump_parse on a buffer.
 */
#ifndef ELT_DUMP_READ_H
#define ELT_DUMP_READ_H

#include <asyncelt.h>

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct dump_function {
	bool defined;
	uint32_t flags;                 /* ELT_FUNCTION_* */
	uint64_t id;
	const char *name;               /* into the buffer; NUL-terminated */
	const char *signature_text;     /* "" when registered without one */
	elt_signature *signature;       /* parsed, NULL when it cannot be */
};

struct dump_event {
	uint64_t time;                  /* ns since the file's base */
	uint64_t invocation;
	uint64_t parent_or_continuation; /* call: parent; resume, suspend: K */
	uint32_t function;
	uint32_t thread;
	uint32_t segment;               /* resume */
	uint32_t previous_thread;       /* resume */
	uint8_t kind;                   /* enum rec_kind, REC_CALL .. REC_TAILCALL */
	uint8_t flags;                  /* REC_ORPHAN ... */
	uint32_t value_len;
	const uint8_t *value;           /* into the buffer, when REC_VALUE */
	size_t offset;                  /* of the record in the file */
};

/* The id of an event's function that the file has no record of (format
 * 3 on): by event index, in event order. */
struct dump_unregistered {
	size_t event;
	uint64_t id;
};

struct dump_file {
	const char *name;               /* for messages */
	int version;                    /* of the format */
	long pid;
	char abi[128];
	uint64_t base_ns;
	uint64_t buffer;                /* the writer's buffer; 0: not said */
	struct dump_function *functions;
	uint32_t nfunctions;
	struct dump_event *events;
	size_t nevents;
	struct dump_unregistered *unregistered;
	size_t nunregistered;
	bool truncated;                 /* ends inside a record */
	bool closed;                    /* has a REC_CLOSE: nothing was cut off */
	size_t whole_bytes;             /* bytes of whole records read */
};

/* Parses `size` bytes at `data` (which must outlive *out).  ELT_OK, maybe
 * with out->truncated (the caller warns); otherwise the problem and its
 * byte offset are in `error` and *out holds nothing to free. */
elt_status dump_parse(const void *data, size_t size, const char *name,
		      struct dump_file *out, char *error, size_t error_size);
void dump_file_free(struct dump_file *f);

/* Every event of files[0..n) in time order (one axis: ns since the
 * earliest file's base, in `time`); a thread's records keep their file
 * order.  NULL when out of memory; *count is the number of events. */
struct dump_ref {
	uint64_t time;
	uint32_t file;
	uint32_t index;
};
struct dump_ref *dump_order(const struct dump_file *files, size_t n, size_t *count);

/* The id of event `event`'s function, when the file has no record of
 * the function (unregistered); 0 when the file does not say (format 2). */
uint64_t dump_unregistered_id(const struct dump_file *f, size_t event);

/* A function's name, or "#index" for one the file never defined. */
const char *dump_function_name(const struct dump_file *f, uint32_t index,
			       char *scratch, size_t scratch_size);

#endif
