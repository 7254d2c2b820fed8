/*
 * The logical invocations of one or more recordings (or of a timing
 * trace): each with its segments, in time order, on one time axis.  What
 * the Chrome trace, the summary and the SVG are drawn from.
 */
#ifndef ELT_DUMP_MODEL_H
#define ELT_DUMP_MODEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct dump_file;

struct model_segment {
	uint64_t start, end;            /* ns since the model's origin */
	uint32_t thread;
	uint32_t invocation;            /* index in model.invocations */
	bool suspends;                  /* ended by a suspension */
	bool flow_in;                   /* began by resuming a seen suspension */
	bool incomplete;                /* still running at the end */
};

struct model_invocation {
	uint64_t id;
	uint64_t parent_id;
	uint32_t process;               /* index in model.processes */
	uint32_t function;              /* index in model.functions */
	uint32_t parent;                /* index in model.invocations, or NONE */
	uint64_t start, end;
	uint32_t start_thread, end_thread;
	uint32_t first_segment, nsegments;  /* in model.by_invocation */
	uint32_t hops;
	uint64_t active;
	bool called;                    /* saw its initial call: else first
					   seen at an orphan resume, its start
					   unknown */
	bool complete;                  /* saw its final return or tail call */
	bool running;                   /* a segment was open at the end */
	bool flow_pending;              /* suspended, its resume not seen */
};

#define MODEL_NONE UINT32_MAX

struct model_function {
	char *name;
	uint64_t calls, segments;
	uint64_t *latencies;            /* per resume after a seen suspension */
	size_t nlatencies, latencies_cap;
};

struct model_process {
	long pid;
	char pid_text[24];
	uint64_t end;                   /* its last event */
};

struct model {
	struct model_function *functions;
	uint32_t nfunctions;
	struct model_process *processes;
	uint32_t nprocesses;
	struct model_invocation *invocations;
	uint32_t ninvocations;
	struct model_segment *segments; /* in start order */
	size_t nsegments;
	uint32_t *by_invocation;        /* segment indexes grouped per invocation */
	uint64_t end;                   /* the last event of all */
	size_t capacity_invocations, capacity_segments;
};

/* Builds the model of files[0..n) (one per process).  False when out of
 * memory. */
bool model_from_recordings(struct model *m, const struct dump_file *files, size_t n);

/* Building a model by hand (the trace reader): */
uint32_t model_function(struct model *m, const char *name);
uint32_t model_process(struct model *m, long pid);
uint32_t model_add_invocation(struct model *m, const struct model_invocation *inv);
bool model_add_segment(struct model *m, const struct model_segment *s);
/* Sorts the segments, groups them per invocation, links parents. */
bool model_finish(struct model *m);

void model_free(struct model *m);

#endif
