/*
 * The hot path: one segment, from the port's entry (or a producer's
 * elt_emit_*) to the plugins' callbacks.  No lock, no allocation, no
 * system call, no stdio: a lookup, a classification, the segment's
 * invocation (invocation.c) and a loop over the plugins.
 */
#include "internal.h"

/* 0: not yet, 1: registered, 2: could not be (out of memory). */
static ELT_TLS unsigned char thread_attached;

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

static void dispatch(struct elt_info *info, unsigned hook, uintptr_t continuation)
{
	unsigned n, i;

	/* Instrumented code that a plugin calls (or a signal handler
	 * interrupting one) is not reported: plugins never recurse. */
	if (elt_in_callback)
		return;
	if (ELT_UNLIKELY(thread_attached != 1)) {
		if (thread_attached == 2)
			return;
		thread_attached = elt_thread_attach() ? 1 : 2;
	}
	/* The flag goes up before the stop is read; shutdown reads them in
	 * the other order (threads.c). */
	elt_in_callback = 1;
	atomic_signal_fence(memory_order_seq_cst);
	n = atomic_load_explicit(&elt_plugin_count, memory_order_acquire);
	if (n == 0 || atomic_load_explicit(&elt_stopped, memory_order_relaxed))
		goto out;

	info->fn = elt_registry_lookup(info->id);
	info->kind = classify(info, hook, continuation);
	elt_invocation_begin(info);

	for (i = 0; i < n; i++) {
		const struct elt_plugin_slot *p = &elt_plugins[i];
		void (*cb)(const elt_info *, void *) =
			hook == ELT_HOOK_ENTER ? p->enter :
			hook == ELT_HOOK_LEAVE ? p->leave : p->tailcall;

		if (cb) {
			info->plugin = i;
			cb(info, p->state);
		}
	}
	elt_invocation_end(info);
out:
	atomic_signal_fence(memory_order_seq_cst);
	elt_in_callback = 0;
}

void elt_dispatch_frame(const void *frame, elt_function_id id, uintptr_t caller_sp,
			unsigned hook, uintptr_t continuation_out)
{
	/* Where getters reassemble split values: on this stack, so plugins
	 * of one segment share it and nothing is allocated. */
	unsigned char scratch[ELT_SCRATCH_SIZE] __attribute__((aligned(16)));
	struct elt_info info;

	info.id = id;
	info.caller_sp = caller_sp;
	info.frame = frame;
	info.scratch = scratch;
	info.emitted = NULL;
	dispatch(&info, hook, continuation_out);
}

void elt_dispatch_emitted(struct elt_info *info, unsigned hook, uintptr_t continuation)
{
	dispatch(info, hook, continuation);
}
