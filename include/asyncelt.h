/*
 * libasyncelt: profiler Enter/Leave/Tailcall hooks that understand async methods.
 *
 * A runtime-async method runs as several physical segments: an initial call,
 * suspensions, resumptions (possibly on other threads) and a final return.
 * Instrumented code calls the per-ABI helpers (see <asyncelt/helpers.h>) at
 * the start and end of every segment; the library classifies the segment and
 * hands it to the registered plugins, which read it through the getters below.
 *
 * This header is the same on every architecture.
 */
#ifndef ASYNCELT_H
#define ASYNCELT_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define ELT_VERSION_MAJOR 0
#define ELT_VERSION_MINOR 1
#define ELT_VERSION_PATCH 0
#define ELT_VERSION_STRING "0.1.0"
/* One number that compares in release order: 0xMMmmpp. */
#define ELT_VERSION_NUMBER \
	((ELT_VERSION_MAJOR << 16) | (ELT_VERSION_MINOR << 8) | ELT_VERSION_PATCH)

#if defined(_WIN32)
# if defined(ELT_BUILDING_LIBRARY)
#  define ELT_API __declspec(dllexport)
# elif defined(ELT_STATIC)
#  define ELT_API
# else
#  define ELT_API __declspec(dllimport)
# endif
#else
# define ELT_API __attribute__((visibility("default")))
#endif

#if defined(__GNUC__)
/* On Windows, "printf" means the C runtime's (msvcrt) conventions, which
 * lack C99's %zu, %lld...: the library formats with mingw-w64's C99
 * printf, so say gnu_printf. */
# if defined(_WIN32)
#  define ELT_PRINTF(fmt, args) __attribute__((format(gnu_printf, fmt, args)))
# else
#  define ELT_PRINTF(fmt, args) __attribute__((format(printf, fmt, args)))
# endif
#else
# define ELT_PRINTF(fmt, args)
#endif

/* Run-time versions, for a program built against one header and run with
 * another library. */
ELT_API unsigned elt_version_number(void);
ELT_API const char *elt_version_string(void);

/* ------------------------------------------------------------------------ */
/* Status codes                                                               */

typedef enum elt_status {
	ELT_OK = 0,
	/* The segment carries no such data: the arguments of a resume, the
	 * return value of a suspension.  Not an error; the profiler API's
	 * CORPROF_E_DATAINCOMPLETE. */
	ELT_E_DATAINCOMPLETE,
	ELT_E_INVALID_ARGUMENT,     /* NULL where a pointer is needed, id 0, ... */
	ELT_E_UNKNOWN_FUNCTION,     /* the function id was never registered */
	ELT_E_NO_SIGNATURE,         /* registered without a signature */
	ELT_E_INSUFFICIENT_BUFFER,  /* the caller's array is too small; the
	                               needed count is reported */
	ELT_E_WRONG_CALLBACK,       /* e.g. enter info asked in a Leave */
	ELT_E_BAD_SIGNATURE,        /* malformed signature string */
	ELT_E_UNSUPPORTED,          /* type or feature not available on this ABI */
	ELT_E_EXISTS,               /* the function id is registered already */
	ELT_E_NO_MEMORY,
	ELT_E_BAD_OPTION,           /* malformed or unknown plugin option */
	ELT_E_PLUGIN,               /* a plugin could not be loaded or started */
	ELT_E_PLUGIN_ABI,           /* a plugin built for an incompatible ABI */
	ELT_E_LIMIT,                /* a fixed table is full */
	ELT_E_CHECK_FAILED,         /* a plugin's checks failed at shutdown */
	ELT_E_IO,                   /* an output file could not be written */
	ELT_E_STATE,                /* call not valid now (e.g. after shutdown) */
	ELT_STATUS_COUNT
} elt_status;

/* A constant string naming the status ("insufficient buffer"). */
ELT_API const char *elt_strerror(elt_status status);

/* The detailed message of the last failing call on this thread (it names
 * the bad input: "signature 'l(i{': position 4: expected '}' to close the
 * struct opened at position 3, found the end of the signature").
 * Empty when nothing failed.  Valid until the next library call that fails
 * on this thread. */
ELT_API const char *elt_last_error(void);

/* Records a detailed message for elt_last_error() and returns `status`;
 * plugins use it to explain why their init refused the options. */
ELT_API elt_status elt_set_error(elt_status status, const char *fmt, ...)
	ELT_PRINTF(2, 3);

/* ------------------------------------------------------------------------ */
/* Types, as the signature language describes them                           */

typedef enum elt_type_kind {
	ELT_TYPE_VOID,
	ELT_TYPE_BOOL,
	ELT_TYPE_CHAR,          /* plain char: its signedness is the ABI's */
	ELT_TYPE_SINT8,
	ELT_TYPE_UINT8,
	ELT_TYPE_SINT16,
	ELT_TYPE_UINT16,
	ELT_TYPE_SINT32,
	ELT_TYPE_UINT32,
	ELT_TYPE_SINT64,
	ELT_TYPE_UINT64,
	ELT_TYPE_SINT128,
	ELT_TYPE_UINT128,
	ELT_TYPE_POINTER,
	ELT_TYPE_FLOAT,
	ELT_TYPE_DOUBLE,
	ELT_TYPE_LONGDOUBLE,
	ELT_TYPE_COMPLEX,       /* element: float, double or long double */
	ELT_TYPE_VECTOR,        /* element x count, GCC vector_size semantics */
	ELT_TYPE_STRUCT,
	ELT_TYPE_UNION,
	ELT_TYPE_ARRAY,         /* fixed array, only inside a struct or union */
	ELT_TYPE_KIND_COUNT
} elt_type_kind;

#define ELT_TYPE_PACKED 0x1u    /* struct or union laid out without padding */

/* A laid-out type.  Sizes and alignments are the ABI's of this build. */
typedef struct elt_type elt_type;
struct elt_type {
	elt_type_kind kind;
	uint32_t size;
	uint32_t align;
	uint32_t flags;
	uint32_t count;                 /* members, array/vector elements;
	                                   2 for complex */
	const elt_type *element;        /* array, vector, complex */
	const elt_type *const *members; /* struct, union: count entries
	                                   (never NULL, even when empty) */
	const uint32_t *offsets;        /* struct, union: byte offsets */
};

#define ELT_SIGNATURE_VARIADIC 0x1u

/* A parsed function signature.  params[] lists every parameter as it is
 * passed, the hidden `this` (T) and continuation (K) included; the
 * variadic arguments of one call site, when given, follow nfixed. */
typedef struct elt_signature {
	const elt_type *ret;
	uint32_t nparams;
	uint32_t nfixed;                /* params before "..." */
	int32_t this_index;             /* index of T in params, or -1 */
	int32_t continuation_index;     /* index of K in params, or -1 */
	uint32_t flags;                 /* ELT_SIGNATURE_VARIADIC */
	const elt_type *const *params;
	const char *text;               /* the string it was parsed from */
} elt_signature;

typedef struct elt_parse_error {
	size_t position;        /* byte offset of the problem in the text */
	char message[160];      /* "position 4: expected '}' to close the
	                           struct opened at position 3, found ..." */
} elt_parse_error;

/* Parses and lays out a signature (the language is in doc/signature.md).
 * The result is one allocation, immutable, safe to read from any thread;
 * release it with elt_signature_free() (NULL is a no-op).  On failure
 * returns ELT_E_BAD_SIGNATURE (malformed) or ELT_E_UNSUPPORTED (a type
 * this ABI lacks), sets *out to NULL and fills *err (may be NULL) and
 * elt_last_error() with the 0-based byte position and the problem.  NULL
 * text or out: ELT_E_INVALID_ARGUMENT.  On success *err is cleared. */
ELT_API elt_status elt_signature_parse(const char *text, elt_signature **out,
				       elt_parse_error *err);
ELT_API void elt_signature_free(elt_signature *sig);

/* "int32", "struct", ...: for diagnostics and log output. */
ELT_API const char *elt_type_kind_name(elt_type_kind kind);

/* ------------------------------------------------------------------------ */
/* Functions                                                                 */

/* The runtime's name for a function: any non-zero value, typically the
 * address of its code or of its method descriptor. */
typedef uintptr_t elt_function_id;

#define ELT_FUNCTION_ASYNC 0x1u  /* a runtime-async method: may suspend */

/* Describes a function before instrumented code reports it.  `name` is
 * copied.  `signature` (copied; may be NULL when unknown) lets the getters
 * decode arguments and return values; an async function needs one with a
 * K parameter, which locates its continuation argument.  Thread-safe; the
 * lookups done by the helpers take no lock.  Returns ELT_E_EXISTS for an id
 * registered already, ELT_E_BAD_SIGNATURE / ELT_E_UNSUPPORTED with a
 * message for a bad signature. */
ELT_API elt_status elt_register_function(elt_function_id id, const char *name,
					 const char *signature, unsigned flags);

/* What was registered for a function. */
typedef struct elt_function_desc {
	elt_function_id id;
	const char *name;
	const elt_signature *signature; /* NULL when registered without */
	unsigned flags;
	uint32_t index;                 /* dense: 0, 1, 2 ... in registration order */
} elt_function_desc;

/* NULL when `id` was never registered. */
ELT_API const elt_function_desc *elt_find_function(elt_function_id id);

/* ------------------------------------------------------------------------ */
/* Segments, as plugins see them                                             */

typedef enum elt_segment_kind {
	ELT_SEGMENT_CALL,       /* Enter, continuation argument NULL */
	ELT_SEGMENT_RESUME,     /* Enter, continuation argument non-NULL */
	ELT_SEGMENT_SUSPEND,    /* Leave, continuation returned non-NULL */
	ELT_SEGMENT_RETURN,     /* Leave, the final return */
	ELT_SEGMENT_TAILCALL,   /* Tailcall: the frame is replaced */
	ELT_SEGMENT_KIND_COUNT
} elt_segment_kind;

/* "call", "resume", "suspend", "return", "tailcall". */
ELT_API const char *elt_segment_kind_name(elt_segment_kind kind);

/* One callback's view of a segment; valid only during that callback. */
typedef struct elt_info elt_info;

/* Where one plugin's function storage (elt_get_function_storage) is on
 * the calling thread: `count` rows of `size` bytes at `start`; row 0 is
 * every unregistered function's, row index + 1 a registered function's.
 * The library's; read through elt_get_function_storage(). */
typedef struct elt_function_rows {
	unsigned char *start;
	uint32_t count;                 /* 0 until the thread's first row */
	uint32_t size;
} elt_function_rows;

/* The first members of every elt_info, in this order for as long as the
 * plugin ABI's major is 1, so that the getters of these facts (below) read
 * them inline in a plugin instead of calling the library
 * (doc/api.md#simple-getters).  Read them through those getters. */
typedef struct elt_info_head {
	elt_segment_kind kind;
	uint32_t plugin;                /* the library's: whose callback runs */
	elt_function_id id;
	const elt_function_desc *function;      /* NULL: never registered */
	/* Appended in plugin ABI 1.4: the calling thread's function storage,
	 * by plugin slot. */
	const elt_function_rows *function_rows;
} elt_info_head;

/* Where a value lives: `length` bytes at `start` (the saved register image,
 * the caller's stack, or the segment's scratch buffer, shared by the plugins
 * of one segment and rewritten by each getter call that reassembles). */
typedef struct elt_range {
	uintptr_t start;
	size_t length;
} elt_range;

/* Available for every segment. */
typedef struct elt_frame_info {
	elt_function_id function_id;
	uintptr_t return_address;       /* where the instrumented function returns */
	uintptr_t caller_sp;            /* caller's SP before the call: the first
	                                   stack argument lives here */
} elt_frame_info;

ELT_API elt_segment_kind elt_get_segment_kind(const elt_info *info);
ELT_API elt_function_id elt_get_function_id(const elt_info *info);
/* NULL for a function that was never registered. */
ELT_API const elt_function_desc *elt_get_function(const elt_info *info);
ELT_API elt_status elt_get_frame_info(const elt_info *info, elt_frame_info *out);

/* Outside the library the three above are loads, not calls: a getter is
 * called in every callback, and a call into a shared library goes through
 * its GOT.  The functions stay for a pointer to one, for other languages
 * and for C89: (elt_get_segment_kind)(info) calls the function. */
#if defined(__cplusplus) || (defined(__STDC_VERSION__) && __STDC_VERSION__ >= 199901L)
# define ELT_INLINE_GETTERS 1
static inline const elt_info_head *elt_info_head_of(const elt_info *info)
{
	return (const elt_info_head *)(const void *)info;
}
#endif
#if defined(ELT_INLINE_GETTERS) && !defined(ELT_BUILDING_LIBRARY)
# define elt_get_segment_kind(info) (elt_info_head_of(info)->kind)
# define elt_get_function_id(info) (elt_info_head_of(info)->id)
# define elt_get_function(info) (elt_info_head_of(info)->function)
#endif

/* The continuation: the argument of a resume, the value a suspension
 * returns; NULL for a call, a final return, a tailcall, or a function that
 * is not async.  ELT_E_UNKNOWN_FUNCTION (and NULL) for an Enter or Leave of
 * a function never registered, since then nothing says where to look. */
ELT_API elt_status elt_get_continuation(const elt_info *info, void **out);

/* Arguments of an initial call, left to right, `this` included, the
 * continuation excluded.  *count is the capacity of `ranges` on entry and
 * the number of arguments on return; when it is too small the call returns
 * ELT_E_INSUFFICIENT_BUFFER, fills nothing and reports the count needed.
 * `total_size` (may be NULL) receives the sum of the lengths.
 * ELT_E_DATAINCOMPLETE on a resume (the argument registers hold nothing),
 * ELT_E_WRONG_CALLBACK outside an Enter, ELT_E_UNKNOWN_FUNCTION /
 * ELT_E_NO_SIGNATURE when nothing describes the arguments. */
ELT_API elt_status elt_get_enter_info(const elt_info *info, elt_range *ranges,
				      size_t *count, size_t *total_size);

/* The return value of a final return: {0, 0} for void.  ELT_E_DATAINCOMPLETE
 * (and {0, 0}) on a suspension, ELT_E_WRONG_CALLBACK outside a Leave. */
ELT_API elt_status elt_get_return_info(const elt_info *info, elt_range *range);

/* Frame information of a tailcall; ELT_E_WRONG_CALLBACK elsewhere. */
ELT_API elt_status elt_get_tailcall_info(const elt_info *info,
					 elt_frame_info *out);

/* The data the current plugin returned from its function_added callback
 * for this function; NULL for an unregistered one. */
ELT_API void *elt_get_function_data(const elt_info *info);

/* ------------------------------------------------------------------------ */
/* Rendering values                                                          */

#define ELT_FORMAT_JSON 0x1u    /* valid JSON: numbers, strings, arrays, objects */

/* Renders the value of type `t` at `data` (t->size bytes, as
 * elt_get_enter_info / elt_get_return_info give it) into buf, always
 * NUL-terminated when size > 0; returns the length the whole text needs
 * (like snprintf), so a result >= size means it was truncated.  Integers in
 * decimal (char as a number), bool true/false, pointers in hex, floats
 * round-trippable, complex as a pair, struct {..} and union {index: ..}
 * (JSON: objects keyed by member index), arrays and vectors [..].  No
 * allocation, no stdio stream: safe in segment callbacks. */
ELT_API size_t elt_format_value(const elt_type *t, const void *data, unsigned flags,
				char *buf, size_t size);

/* ------------------------------------------------------------------------ */
/* Logical invocations                                                       */

/* The segments of one logical call (its initial call, suspensions,
 * resumptions on any thread, its final return) stitched together by the
 * library, with no help from the runtime: the continuation a suspension
 * returns is the one its resume receives.  doc/api.md tells the details. */
typedef uint64_t elt_invocation_id;

typedef struct elt_invocation {
	elt_invocation_id id;           /* non-zero; the same for every segment
	                                   of one logical call, initial Enter to
	                                   final Leave, on any thread; never
	                                   reused within the process */
	elt_invocation_id parent;       /* the invocation that was running on
	                                   this thread when this one was called
	                                   (its awaiting parent), 0 if none */
	uint32_t segment;               /* 0: the initial call's segment;
	                                   k: the k-th resume */
	uint32_t flags;                 /* ELT_INVOCATION_* */
	uint32_t thread;                /* dense index (1, 2, ...) of the thread
	                                   running this segment, assigned when a
	                                   thread first reports */
	uint32_t previous_thread;       /* on a resume: the thread that ran the
	                                   segment that suspended; otherwise
	                                   equal to thread */
} elt_invocation;

#define ELT_INVOCATION_ASYNC  0x1u      /* the function is async (may suspend) */
#define ELT_INVOCATION_ORPHAN 0x2u      /* a resume whose continuation was never
	                                   seen suspending: a new id was made
	                                   (and counted) */

/* The invocation this segment belongs to.  ELT_E_DATAINCOMPLETE for a
 * Leave or Tailcall that matches no Enter on this thread (counted,
 * reported at shutdown), and in every segment when all plugins said
 * ELT_PLUGIN_NO_INVOCATIONS: *out zeroed but for thread and
 * previous_thread, this thread's index all the same. */
ELT_API elt_status elt_get_invocation(const elt_info *info, elt_invocation *out);

/* The calling plugin's storage for this invocation: NULL at its initial
 * call, kept across its segments and threads; the plugin releases what it
 * stored by the final return (or the tailcall that ends it).  NULL (no
 * storage) where elt_get_invocation() gives ELT_E_DATAINCOMPLETE. */
ELT_API void **elt_get_invocation_slot(const elt_info *info);

/* The calling plugin's invocation_storage bytes (its descriptor asks for
 * them) for this invocation, 16-byte aligned: zeroed at its initial call,
 * kept across its segments and threads until the callbacks of the segment
 * that ends it return; the library reuses them after, so the plugin
 * allocates and frees nothing per invocation.  Their address may change
 * between callbacks (doc/api.md): ask in each.  NULL when the plugin asked
 * for none, or where elt_get_invocation_slot() gives NULL. */
ELT_API void *elt_get_invocation_storage(const elt_info *info);

/* The calling plugin's function_storage bytes (its descriptor asks for
 * them) for this segment's function on this thread, 16-byte aligned,
 * zeroed when first handed out; one row serves every unregistered
 * function.  The thread's own, so counters kept there need no atomics;
 * after the thread exits a later thread may go on in the same bytes,
 * which then hold sums over both.  fini reads every thread's with
 * elt_foreach_function_storage().  NULL when the plugin asked for none,
 * and when out of memory. */
ELT_API void *elt_get_function_storage(const elt_info *info);
/* Its rare step (a thread's first row, a function beyond its rows), for
 * the inline getter below.  A plugin that reads the head's function_rows
 * thus needs a library that has this symbol, one of plugin ABI 1.4 or
 * later: an older one refuses to load it (undefined symbol) rather than
 * let it read past a shorter head. */
#if defined(__GNUC__)
__attribute__((cold))
#endif
ELT_API void *elt_get_function_storage_slow(const elt_info *info);

#ifdef ELT_INLINE_GETTERS
/* The getter as the library runs it, inline: in a counter's callback a
 * call and a thread-local lookup cost more than the count. */
static inline void *elt_function_storage_inline(const elt_info *info)
{
	const elt_info_head *head = elt_info_head_of(info);
	const elt_function_rows *rows = &head->function_rows[head->plugin];
	uint32_t row = head->function ? head->function->index + 1 : 0;

	if (row < rows->count)
		return rows->start + (size_t)row * rows->size;
	return elt_get_function_storage_slow(info);
}
# ifndef ELT_BUILDING_LIBRARY
#  define elt_get_function_storage(info) elt_function_storage_inline(info)
# endif
#endif

typedef struct elt_invocation_stats {
	uint64_t started, completed, live;  /* live = started - completed -
	                                       abandoned ones forgotten:
	                                       invocations not finished */
	uint64_t orphan_resumes;        /* resumes with an unknown continuation */
	uint64_t early_resumes;         /* resumes seen before the suspending
	                                   Leave, stitched after waiting */
	uint64_t unbalanced_leaves;     /* Leave or Tailcall matching no Enter
	                                   on its thread */
	uint64_t abandoned;             /* invocations that can no longer
	                                   complete (an outer frame's Leave came
	                                   first: an unwind; or their
	                                   continuation was reused unresumed):
	                                   part of live while a plugin keeps
	                                   them (invocation_abandoned in
	                                   asyncelt/plugin.h) */
	uint64_t unpublished;           /* suspensions the continuation map had
	                                   no room for: their resumes are orphans */
	uint64_t waiting_resumes;       /* now: resumes waiting for their
	                                   suspension's Leave */
} elt_invocation_stats;

/* A snapshot of the counters (each read atomically, not all at once). */
ELT_API void elt_get_invocation_stats(elt_invocation_stats *out);

/* ------------------------------------------------------------------------ */
/* Producer API: segments of a runtime whose values are in memory            */

/* For interpreters and runtimes written in C, which report segments by
 * calling these instead of the helpers.  The same classification, plugins
 * and getters; ranges point at the producer's values.  id 0:
 * ELT_E_INVALID_ARGUMENT, nothing reported.  An unregistered id is
 * reported (as the helpers do) and gives ELT_E_UNKNOWN_FUNCTION.
 *
 * args: a pointer to each parameter's value in signature order, `this`
 * included, K excluded (K is `continuation`); NULL when the signature has
 * no parameters, and may be NULL on a resume. */
ELT_API elt_status elt_emit_enter(elt_function_id id, void *const *args,
				  void *continuation);
/* ret: the return value (NULL for void or a suspension); continuation:
 * non-NULL for a suspension. */
ELT_API elt_status elt_emit_leave(elt_function_id id, const void *ret,
				  void *continuation);
ELT_API elt_status elt_emit_tailcall(elt_function_id id, void *const *args);

/* ------------------------------------------------------------------------ */
/* Life cycle                                                                */

/* Starts the library: loads the plugins named by $ASYNCELT_PLUGINS (see
 * <asyncelt/plugin.h>).  Idempotent and thread-safe.  A plugin that fails to
 * load is reported and skipped; the others run.  Returns the first failure
 * after trying them all. */
ELT_API elt_status elt_init(void);

/* Stops every plugin (fini: reports are printed then) and returns
 * ELT_E_CHECK_FAILED when one of them reports failed checks.  Called at
 * exit if the program does not; a failed check then makes the process exit
 * with status 3.  Segments reported after shutdown are ignored. */
ELT_API elt_status elt_shutdown(void);

/* The ABI of this build's helpers: "x86_64-sysv", "aarch64", ... */
ELT_API const char *elt_abi_name(void);

#ifdef __cplusplus
}
#endif

#endif /* ASYNCELT_H */
