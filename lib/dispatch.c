/*
 * The hot path: one segment, from the port's entry (or a producer's
 * elt_emit_*) to the plugins' callbacks.  No lock, no allocation, no
 * system call, no stdio: a lookup, a classification, the segment's
 * invocation (invocation.c) and a loop over the plugins.
 */
#include "invocation.h"

#include <errno.h>

static inline uintptr_t continuation_argument(const struct elt_info *info)
{
	const struct elt_plan *plan = &info->fn->plan;

	return *(const uintptr_t *)elt_piece_address(info, &plan->continuation);
}

/* `continuation`: the producer's on an emitted Enter, the continuation
 * return register on a Leave. */
static inline elt_segment_kind classify(struct elt_info *info, unsigned hook,
					uintptr_t continuation)
{
	/* Only an async function resumes or suspends; in any other the
	 * continuation registers hold whatever they held. */
	int async = info->fn && (info->fn->desc.flags & ELT_FUNCTION_ASYNC);

	switch (hook) {
	case ELT_HOOK_ENTER:
		/* A producer passes it; a helper's is where the plan says. */
		if (!async)
			info->continuation = 0;
		else if (info->emitted)
			info->continuation = continuation;
		else
			info->continuation = continuation_argument(info);
		return info->continuation ? ELT_SEGMENT_RESUME : ELT_SEGMENT_CALL;
	case ELT_HOOK_LEAVE:
		info->continuation = async ? continuation : 0;
		return info->continuation ? ELT_SEGMENT_SUSPEND : ELT_SEGMENT_RETURN;
	default:
		info->continuation = 0;
		return ELT_SEGMENT_TAILCALL;
	}
}

/* Runs the plugins for a segment whose info has id and fn set; the
 * caller has raised this thread's flag and found the library armed. */
static inline __attribute__((always_inline)) void
run_plugins(struct elt_info *info, unsigned hook, uintptr_t continuation)
{
	unsigned n = atomic_load_explicit(&elt_plugin_count, memory_order_acquire);
	unsigned i, which = elt_hook_index(hook);
	int tracking = atomic_load_explicit(&elt_tracking, memory_order_relaxed);

	info->kind = classify(info, hook, continuation);
	info->invocation = NULL;
	if (tracking)
		elt_invocation_begin(info);
	for (i = 0; i < n; i++) {
		const struct elt_plugin_slot *p = &elt_plugins[i];
		elt_segment_callback cb = p->segment[which];

		if (cb) {
			info->plugin = i;
			cb(info, p->state);
		}
	}
	if (tracking)
		elt_invocation_end(info);
}

/*
 * The three checks every segment starts with, before anything is built:
 * this thread is not already in plugin code (instrumented code a plugin
 * calls, or a signal handler interrupting one, is not reported: plugins
 * never recurse), the thread is known (its first segment registers it),
 * and the library is still armed.  Returns 1 with the thread's flag up,
 * or 0 with nothing to undo.
 */
static inline __attribute__((always_inline)) int begin_callback(void)
{
	unsigned flags = atomic_load_explicit(&elt_thread_flags, memory_order_relaxed);

	if (ELT_UNLIKELY(flags != ELT_THREAD_ATTACHED)) {
		int saved_errno = errno;        /* a signal handler may be reporting */
		int attached;

		if (flags)      /* in a callback already, or never attachable */
			return 0;
		/* Idle (a producer's segment before any plugin): attach
		 * only once a plugin was added, and the layers with it. */
		if (!atomic_load_explicit(&elt_armed, memory_order_relaxed))
			return 0;
		attached = elt_thread_attach();
		errno = saved_errno;
		if (!attached)
			return 0;
	}
	return elt_callback_begin();
}

void elt_dispatch_frame(const void *frame, elt_function_id id, uintptr_t caller_sp,
			unsigned hook, uintptr_t continuation_out)
{
	/* Where getters reassemble split values: on this stack, so plugins
	 * of one segment share it and nothing is allocated. */
	unsigned char scratch[ELT_SCRATCH_SIZE] __attribute__((aligned(16)));
	struct elt_info info;

	if (!begin_callback())
		return;
	info.id = id;
	info.fn = elt_registry_lookup(id);
	info.caller_sp = caller_sp;
	info.frame = frame;
	info.scratch = scratch;
	info.emitted = NULL;
	run_plugins(&info, hook, continuation_out);
	elt_callback_end();
}

void elt_dispatch_emitted(struct elt_info *info, unsigned hook, uintptr_t continuation)
{
	if (!begin_callback())
		return;
	run_plugins(info, hook, continuation);
	elt_callback_end();
}
