/*
 * The hot path: one segment, from the port's entry (or a producer's
 * elt_emit_*) to the plugins' callbacks.  No lock, no allocation, no
 * system call, no stdio: a lookup, a classification, the segment's
 * invocation (invocation.c) and a loop over the plugins.
 */
#include "invocation.h"
#include "test-points.h"

#include <errno.h>
#include <string.h>

static inline uintptr_t continuation_argument(const struct elt_info *info)
{
	const struct elt_plan *plan = &elt_info_function(info)->plan;

	return *(const uintptr_t *)elt_piece_address(info, &plan->continuation);
}

/* The segment's kind, and for a resume or a suspension its continuation.
 * `continuation`: the producer's in an emitted segment, the continuation
 * return register on a helper's Leave. */
static inline elt_segment_kind classify(struct elt_info *info, unsigned hook,
					uintptr_t continuation)
{
	/* Only an async function resumes or suspends; in any other the
	 * continuation registers hold whatever they held. */
	const elt_function_desc *fn = info->head.function;

	if (hook == ELT_HOOK_TAILCALL)
		return ELT_SEGMENT_TAILCALL;
	if (fn && (fn->flags & ELT_FUNCTION_ASYNC)) {
		/* A producer passes it; a helper's is where the plan says. */
		if (hook == ELT_HOOK_ENTER && info->frame)
			continuation = continuation_argument(info);
		if (continuation) {
			info->continuation = continuation;
			return hook == ELT_HOOK_ENTER ? ELT_SEGMENT_RESUME : ELT_SEGMENT_SUSPEND;
		}
	}
	return hook == ELT_HOOK_ENTER ? ELT_SEGMENT_CALL : ELT_SEGMENT_RETURN;
}

/* The head's kind, and plugin 0 whose callback runs first: its first
 * eight bytes, in one store. */
_Static_assert(sizeof(elt_segment_kind) == 4, "the kind is the head's first 4 bytes");
static inline void set_kind(elt_info_head *head, elt_segment_kind kind)
{
	uint64_t both = (uint32_t)kind;

#if !defined(__BYTE_ORDER__)
#error "set_kind needs the compiler's __BYTE_ORDER__"
#elif __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
	both <<= 32;
#endif
	/* Told the head's alignment, which a pointer's type does not
	 * promise it: else a strict-alignment target calls memcpy. */
	memcpy(__builtin_assume_aligned(head, _Alignof(elt_info_head)), &both, sizeof(both));
}

/* The first plugin's callback, where it is the only one to run. */
static inline __attribute__((always_inline)) void run_first_plugin(struct elt_info *info,
								   unsigned which)
{
	elt_segment_callback cb = elt_plugins[0].segment[which];

	if (cb)
		cb(info, elt_plugins[0].state);
}

/* Whether the plugins in `state` are one plugin that needs nothing more:
 * no invocations, and none that may change the floating-point control
 * state unless the helper saved it (`fp_saved`). */
static inline int one_plain_plugin(uint32_t state, int fp_saved)
{
	uint32_t ignored = fp_saved ? ELT_PLUGINS_FLOAT : 0;

	return (state & ~ignored) == 1;
}

/* Every plugin's callback for a segment, in order. */
static __attribute__((noinline)) void run_callbacks(struct elt_info *info, unsigned which,
						    unsigned n)
{
	unsigned i;

	for (i = 0; i < n; i++) {
		const struct elt_plugin_slot *p = &elt_plugins[i];
		elt_segment_callback cb = p->segment[which];

		/* A callback before may have shut the library down, on this
		 * thread: the plugins' fini have run, their state is gone.
		 * (Another thread's shutdown waits for this one's flag.) */
		if (i && !atomic_load_explicit(&elt_armed, memory_order_relaxed))
			break;
		if (cb) {
			info->head.plugin = i;
			cb(info, p->state);
		}
	}
}

/* How many of the first `n` plugins may run in a segment whose helper did
 * not save the floating-point control state: those before the first that
 * may change it.  Only a segment in flight while that plugin was added
 * gets here, and such a segment may miss a new plugin anyway. */
static __attribute__((noinline, cold)) unsigned float_free_prefix(unsigned n)
{
	unsigned i;

	for (i = 0; i < n; i++)
		if (!(elt_plugins[i].flags & ELT_PLUGIN_NO_FLOAT))
			break;
	return i;
}

/*
 * The invocations found abandoned (invocation.c queued them), after the
 * callbacks of the Leave that found them or, for the rare one a resume
 * found, of the thread's next Leave.  Each plugin's invocation_abandoned
 * hears of each, innermost first; then the library forgets it, unless a
 * plugin without that callback still holds something for it (its slot or
 * its storage) or was built before plugin ABI 1.5, when abandoned
 * invocations stayed live: such a plugin may free what it holds, or list
 * them, from its fini.  Where the helper saved no floating-point control
 * state, only the plugins run_plugins_general may run are told; the rest
 * keep it too.
 */
static __attribute__((noinline, cold)) void tell_abandoned(int fp_saved)
{
	struct elt_thread_invocations *t = elt_thread.invocations;
	unsigned n = elt_plugins_in_use(), i;
	unsigned callable = fp_saved ? n : float_free_prefix(n);
	struct elt_invocation_record *r;

	while ((r = elt_invocation_next_abandoned(t))) {
		const elt_function_desc *fn = r->fn ? &r->fn->desc : NULL;
		int keep = 0;

		for (i = 0; i < n; i++) {
			const struct elt_plugin_slot *p = &elt_plugins[i];
			void *data;

			if (p->flags & ELT_PLUGIN_NO_INVOCATIONS)
				continue;
			/* A callback may have shut the library down. */
			if (i >= callable || !atomic_load_explicit(&elt_armed, memory_order_relaxed)) {
				keep = 1;
				continue;
			}
			data = elt_invocation_plugin_data(r, i);
			if (p->invocation_abandoned) {
				r->told |= (uint16_t)(1u << i);
				p->invocation_abandoned(&r->inv, fn, data, p->state);
			} else if (data || !p->knows_forgetting)
				keep = 1;
		}
		if (!keep)
			elt_invocation_forget(t, r);
	}
}

/* Invocation tracking, out of line: the dispatcher's own frame then
 * needs no registers for it. */
static __attribute__((noinline)) void begin_invocation(struct elt_info *info)
{
	elt_invocation_begin(info);
}

/* One instance per fp_saved, so that the test of the queue is all the
 * abandoned invocations cost a Leave. */
static inline __attribute__((always_inline)) void end_invocation_as(struct elt_info *info,
								     int fp_saved)
{
	if (ELT_UNLIKELY(elt_invocation_end(info)))
		tell_abandoned(fp_saved);
}

static __attribute__((noinline)) void end_invocation(struct elt_info *info)
{
	end_invocation_as(info, 1);
}

static __attribute__((noinline)) void end_invocation_nofloat(struct elt_info *info)
{
	end_invocation_as(info, 0);
}

/* Any other table of plugins than one alone that needs nothing: several
 * plugins, invocations to stitch, or one that may change the
 * floating-point control state where the helper saved none. */
static inline __attribute__((always_inline)) void
run_plugins_general(struct elt_info *info, unsigned hook, uint32_t state, int fp_saved)
{
	unsigned which = elt_hook_index(hook), n;

	if (state & ELT_PLUGINS_TRACKING) {
		begin_invocation(info);
		/* Read again rather than kept across the call: it can only
		 * have grown, and a segment may include a plugin added
		 * meanwhile. */
		state = atomic_load_explicit(&elt_plugins_state, memory_order_acquire);
	}
	n = state & ELT_PLUGINS_COUNT_MASK;
	if (!fp_saved && (state & ELT_PLUGINS_FLOAT))
		n = float_free_prefix(n);
	if (n == 1)
		run_first_plugin(info, which);
	else
		run_callbacks(info, which, n);
	/* Only a Leave or Tailcall ends what tracking began. */
	if (hook != ELT_HOOK_ENTER && info->invocation) {
		if (fp_saved)
			end_invocation(info);
		else
			end_invocation_nofloat(info);
	}
}

/* The kind of a segment of a function that cannot suspend. */
static inline elt_segment_kind plain_kind(unsigned hook)
{
	return hook == ELT_HOOK_ENTER ? ELT_SEGMENT_CALL
	       : hook == ELT_HOOK_LEAVE ? ELT_SEGMENT_RETURN : ELT_SEGMENT_TAILCALL;
}

/* Runs the plugins for a segment of `kind` whose info has all but its
 * kind set (the continuation only for a resume or suspension); the caller
 * has raised this thread's flag and found the library armed.  `fp_saved`
 * (a constant in each instance) is whether the helper saved the
 * floating-point control state; without, only plugins that leave it
 * alone may run.  One plugin that needs nothing more, the usual case,
 * takes one load and one comparison; then only the thread's TLS block is
 * live across its callback: the dispatcher saves one register, not six. */
static inline __attribute__((always_inline)) void
run_plugins(struct elt_info *info, unsigned hook, elt_segment_kind kind, int fp_saved)
{
	uint32_t state;

	set_kind(&info->head, kind);
	state = atomic_load_explicit(&elt_plugins_state, memory_order_acquire);
	if (ELT_LIKELY(one_plain_plugin(state, fp_saved)))
		run_first_plugin(info, elt_hook_index(hook));
	else
		run_plugins_general(info, hook, state, fp_saved);
}

/*
 * The three checks every segment starts with, before anything is built:
 * this thread is not already in plugin code (instrumented code a plugin
 * calls, or a signal handler interrupting one, is not reported: plugins
 * never recurse), the thread is known (its first segment registers it),
 * and the library is still armed.
 */
static inline __attribute__((always_inline)) int thread_attached(void)
{
	return atomic_load_explicit(&elt_thread.flags, memory_order_relaxed) ==
	       ELT_THREAD_ATTACHED;
}

/* Where thread_attached() failed: 1 if this is the thread's first
 * segment and it is now attached. */
static __attribute__((noinline, cold)) int attach_thread(void)
{
	int saved_errno, attached;

	if (atomic_load_explicit(&elt_thread.flags, memory_order_relaxed))
		return 0;       /* in a callback already, or never attachable */
	/* Idle (a producer's segment before any plugin): attach only once
	 * a plugin was added, and the layers with it. */
	if (!atomic_load_explicit(&elt_armed, memory_order_relaxed))
		return 0;
	saved_errno = errno;    /* a signal handler may be reporting */
	attached = elt_thread_attach();
	errno = saved_errno;
	return attached;
}

/* Returns 1 with the thread's flag up, or 0 with nothing to undo. */
static inline __attribute__((always_inline)) int begin_callback(void)
{
	if (ELT_UNLIKELY(!thread_attached()) && !attach_thread())
		return 0;
	return elt_callback_begin();
}

/* The dispatcher for `hook`: one of the six below. */
static inline __attribute__((always_inline)) void
dispatch_hook(const void *frame, elt_function_id id, uintptr_t caller_sp, unsigned hook,
	      uintptr_t continuation_out, int fp_saved)
{
	switch (hook) {
	case ELT_HOOK_ENTER:
		if (fp_saved)
			elt_dispatch_enter(frame, id, caller_sp);
		else
			elt_dispatch_enter_nofloat(frame, id, caller_sp);
		break;
	case ELT_HOOK_LEAVE:
		if (fp_saved)
			elt_dispatch_leave(frame, id, caller_sp, continuation_out);
		else
			elt_dispatch_leave_nofloat(frame, id, caller_sp, continuation_out);
		break;
	default:
		if (fp_saved)
			elt_dispatch_tailcall(frame, id, caller_sp);
		else
			elt_dispatch_tailcall_nofloat(frame, id, caller_sp);
		break;
	}
}

/* A helper's segment on a thread not (yet) attached, out of line: the
 * dispatcher keeps nothing across the attachment. */
static __attribute__((noinline, cold)) void
dispatch_unattached(const void *frame, elt_function_id id, uintptr_t caller_sp, unsigned hook,
		    uintptr_t continuation_out, int fp_saved)
{
	if (attach_thread())
		dispatch_hook(frame, id, caller_sp, hook, continuation_out, fp_saved);
}

/* An elt_info other than the thread's own (a producer's, or a copy with
 * scratch after it): what the thread's keeps from segment to segment. */
static inline void own_info_begin(struct elt_info *info)
{
	info->head.function_rows = elt_thread.info.head.function_rows;
	info->invocation = NULL;
}

/* The plugins of a segment whose function reassembles values split
 * across registers and the stack: they get a copy of its info heading an
 * elt_frame_segment, with the room the getters reassemble into (info.c).
 * Out of line, so that every other segment's frame holds its info only. */
static __attribute__((noinline)) void
run_plugins_with_scratch(const struct elt_info *info, unsigned hook,
			 uintptr_t continuation_out, int fp_saved)
{
	struct elt_frame_segment segment;
	elt_segment_kind kind;

	/* What dispatch_frame set, field by field: run_plugins sets the
	 * rest, and a copy of the whole 72 bytes is a call to memcpy on
	 * ppc64le (check-hot-path.sh). */
	segment.info.head.id = info->head.id;
	segment.info.head.function = info->head.function;
	segment.info.caller_sp = info->caller_sp;
	segment.info.frame = info->frame;
	own_info_begin(&segment.info);
	kind = classify(&segment.info, hook, continuation_out);
	if (fp_saved)
		run_plugins(&segment.info, hook, kind, 1);
	else
		run_plugins(&segment.info, hook, kind, 0);
}

/* A helper's segment with the thread's flag up and the library armed,
 * but for the usual case (dispatch_flag_up): `fn` is what the registry's
 * first probe found, NULL when it missed or was not made. */
static inline __attribute__((always_inline)) void
dispatch_general(const void *frame, elt_function_id id, uintptr_t caller_sp, unsigned hook,
		 uintptr_t continuation_out, int fp_saved, const struct elt_function *fn)
{
	struct elt_info *info = &elt_thread.info;

	/* All but fn first: nothing is then live across the lookup's call
	 * when its first probe missed. */
	info->head.id = id;
	info->caller_sp = caller_sp;
	info->frame = frame;
	if (!fn)
		fn = elt_registry_lookup(id);
	elt_info_set_function(info, fn);
	if (!fn || !fn->needs_more)
		run_plugins(info, hook, plain_kind(hook), fp_saved);
	else if (fn->plan.scratch_size)
		run_plugins_with_scratch(info, hook, continuation_out, fp_saved);
	else
		run_plugins(info, hook, classify(info, hook, continuation_out), fp_saved);
}

/* dispatch_general out of line, one function per hook (the FP policy
 * is one test there): the straight path then needs no frame. */
#define GENERAL(name, hook)                                                     \
	static ELT_SEGMENT_PATH __attribute__((noinline)) void                  \
	name(const void *frame, elt_function_id id, uintptr_t caller_sp,       \
	     uintptr_t continuation_out, int fp_saved, const struct elt_function *fn) \
	{                                                                       \
		dispatch_general(frame, id, caller_sp, hook, continuation_out,  \
				 fp_saved, fn);                                 \
	}
GENERAL(general_enter, ELT_HOOK_ENTER)
GENERAL(general_leave, ELT_HOOK_LEAVE)
GENERAL(general_tailcall, ELT_HOOK_TAILCALL)

/* The general path of a segment of `hook`, with the thread's flag up:
 * out of line for a caller that keeps no frame (the `_flag_up`
 * dispatchers, which end in a jump to the plugin's callback), inline for
 * one that has a frame anyway. */
static inline __attribute__((always_inline)) void
dispatch_armed_general(int out_of_line, const void *frame, elt_function_id id,
		       uintptr_t caller_sp, unsigned hook, uintptr_t continuation_out,
		       int fp_saved, const struct elt_function *fn)
{
	if (!out_of_line)
		dispatch_general(frame, id, caller_sp, hook, continuation_out, fp_saved, fn);
	else
		(hook == ELT_HOOK_ENTER ? general_enter
		 : hook == ELT_HOOK_LEAVE ? general_leave
		 : general_tailcall)(frame, id, caller_sp, continuation_out, fp_saved, fn);
}

/* A helper's segment with the thread's flag up.  The usual one, one
 * plugin that needs nothing more and a function found at the registry's
 * first probe whose values need nothing more either, is checked first
 * and then written: it ends in a jump to the callback, keeping no
 * register across a call, where the flag is lowered by the caller.  Its
 * one load of the plugins' state, after the raise, is also the read of
 * the stop that elt_callback_begin() makes: ELT_PLUGINS_STOPPED goes up
 * with elt_armed down (plugin.c).  Any other segment is
 * dispatch_general's, the plugins' state tested first so that one
 * tracking invocations does not look up twice. */
static inline __attribute__((always_inline)) void
dispatch_flag_up(int general_out_of_line, const void *frame, elt_function_id id,
		 uintptr_t caller_sp, unsigned hook, uintptr_t continuation_out, int fp_saved)
{
	struct elt_info *info = &elt_thread.info;
	uint32_t state = atomic_load_explicit(&elt_plugins_state, memory_order_acquire);
	const struct elt_function *fn;

	if (ELT_UNLIKELY(!one_plain_plugin(state, fp_saved))) {
		if (!(state & ELT_PLUGINS_STOPPED))
			dispatch_armed_general(general_out_of_line, frame, id, caller_sp, hook,
					       continuation_out, fp_saved, NULL);
		return;
	}
	fn = elt_registry_first(id);
	if (ELT_UNLIKELY(!fn || fn->needs_more)) {
		dispatch_armed_general(general_out_of_line, frame, id, caller_sp, hook,
				       continuation_out, fp_saved, fn);
		return;
	}
	/* The thread's info is written only with its flag up: a signal
	 * handler's segment before that may use it too. */
	info->head.id = id;
	info->caller_sp = caller_sp;
	info->frame = frame;
	elt_info_set_function(info, fn);
	set_kind(&info->head, plain_kind(hook));
	run_first_plugin(info, elt_hook_index(hook));
}

/* One helper's segment, the thread's flag raised and lowered by the
 * helper itself (x86-64 System V): this function keeps no frame. */
static inline __attribute__((always_inline)) void
dispatch_raised(const void *frame, elt_function_id id, uintptr_t caller_sp, unsigned hook,
		uintptr_t continuation_out, int fp_saved)
{
	dispatch_flag_up(1, frame, id, caller_sp, hook, continuation_out, fp_saved);
}

/* One helper's segment, the thread's flag raised and lowered here. */
static inline __attribute__((always_inline)) void
dispatch_frame(const void *frame, elt_function_id id, uintptr_t caller_sp, unsigned hook,
	       uintptr_t continuation_out, int fp_saved)
{
	if (ELT_UNLIKELY(!thread_attached())) {
		dispatch_unattached(frame, id, caller_sp, hook, continuation_out, fp_saved);
		return;
	}
	ELT_TEST_POINT(ELT_POINT_FLAG_RAISING, 0);
	if (!elt_callback_begin())
		return;
	dispatch_flag_up(0, frame, id, caller_sp, hook, continuation_out, fp_saved);
	elt_callback_end();
}

/* One function per hook, each with only the registers it needs: a
 * segment's `how`, and whether the helper saved the floating-point
 * control state.  The x86 helpers call these directly; the other ports'
 * one body serves every hook and goes through elt_dispatch_frame. */
#define DISPATCHERS(suffix, how, fp_saved)                                      \
	ELT_SEGMENT_PATH __attribute__((noinline)) void                         \
	elt_dispatch_enter##suffix(const void *frame, elt_function_id id,       \
				   uintptr_t caller_sp)                         \
	{                                                                       \
		how(frame, id, caller_sp, ELT_HOOK_ENTER, 0, fp_saved);         \
	}                                                                       \
	ELT_SEGMENT_PATH __attribute__((noinline)) void                         \
	elt_dispatch_leave##suffix(const void *frame, elt_function_id id,       \
				   uintptr_t caller_sp, uintptr_t continuation_out) \
	{                                                                       \
		how(frame, id, caller_sp, ELT_HOOK_LEAVE, continuation_out, fp_saved); \
	}                                                                       \
	ELT_SEGMENT_PATH __attribute__((noinline)) void                         \
	elt_dispatch_tailcall##suffix(const void *frame, elt_function_id id,    \
				      uintptr_t caller_sp)                      \
	{                                                                       \
		how(frame, id, caller_sp, ELT_HOOK_TAILCALL, 0, fp_saved);      \
	}

DISPATCHERS(, dispatch_frame, 1)
DISPATCHERS(_nofloat, dispatch_frame, 0)
DISPATCHERS(_flag_up, dispatch_raised, 0)

#if defined(ELT_TEST_HOOKS)
/* ELT_POINT_FLAG_RAISING for a helper that raises the flag itself. */
void elt_test_point_flag_raising(void)
{
	ELT_TEST_POINT(ELT_POINT_FLAG_RAISING, 0);
}
#endif

/* The other ports' helpers always save the floating-point control state. */
ELT_SEGMENT_PATH void
elt_dispatch_frame(const void *frame, elt_function_id id, uintptr_t caller_sp, unsigned hook,
		   uintptr_t continuation_out)
{
	dispatch_hook(frame, id, caller_sp, hook, continuation_out, 1);
}

/* A producer's segment: its caller is C code, which expects no more of
 * the floating-point state across a call than the C ABI promises. */
ELT_SEGMENT_PATH void
elt_dispatch_emitted(struct elt_info *info, unsigned hook, uintptr_t continuation)
{
	if (!begin_callback())
		return;
	own_info_begin(info);
	run_plugins(info, hook, classify(info, hook, continuation), 1);
	elt_callback_end();
}
