/*
 * A plugin that calls back into the library from its init or its
 * function_added, which run with the locks that adding a plugin,
 * registering a function and shutting down take: each such call is
 * refused with ELT_E_STATE and a message, rather than wait for itself
 * forever.  An alarm ends the program if one does.  Then a segment
 * callback that shuts the library down: the plugins after it in that
 * segment, whose fini has run, are not called.  And a signal whose
 * handler reports a segment, delivered while a live plugin's
 * function_added runs: the segment is not reported into the code it
 * interrupted, as for a callback.
 */
#define ELT_PLUGIN_STATIC
#include "tap.h"

#include <asyncelt.h>
#include <asyncelt/plugin.h>

#include <signal.h>
#include <unistd.h>

extern const elt_plugin elt_plugin_inner, elt_plugin_outer;

static elt_status from_init_add, from_init_shutdown;
static char from_init_message[256];
static elt_status from_added_register = ELT_OK, from_added_add = ELT_OK;
static char from_added_message[256];
static int told;

static void *inner_function_added(void *state, const elt_function_desc *fn)
{
	(void)state;
	if (fn->id != 0x10 || told++)
		return NULL;
	from_added_register = elt_register_function(0x99, "Nested", "v()", 0);
	snprintf(from_added_message, sizeof(from_added_message), "%s", elt_last_error());
	from_added_add = elt_plugin_add(&elt_plugin_outer, NULL);
	return NULL;
}

static elt_status outer_init(const char *options, void **state)
{
	(void)options;
	(void)state;
	from_init_add = elt_plugin_add(&elt_plugin_inner, NULL);
	snprintf(from_init_message, sizeof(from_init_message), "%s", elt_last_error());
	from_init_shutdown = elt_shutdown();
	return ELT_OK;
}

ELT_PLUGIN_DEFINE(inner, .function_added = inner_function_added);
ELT_PLUGIN_DEFINE(outer, .init = outer_init);

/* stopper shuts down from its enter; later's enter must not follow its
 * fini.  Added after inner: three plugins, the general dispatch path. */
static int later_finished, later_called_after_fini, stopper_status = -1;

static void stopper_enter(const elt_info *info, void *state)
{
	(void)info;
	(void)state;
	stopper_status = elt_shutdown();
}

static void later_enter(const elt_info *info, void *state)
{
	(void)info;
	(void)state;
	later_called_after_fini += later_finished;
}

static elt_status later_fini(void *state)
{
	(void)state;
	later_finished = 1;
	return ELT_OK;
}

ELT_PLUGIN_DEFINE(stopper, .enter = stopper_enter);

/* writer's function_added is interrupted by a signal (where the logging
 * plugin writes the function's definition into the thread's buffer). */
static const elt_function_id ANNOUNCED = 0x20, SIGNALED = 0x21;
static volatile sig_atomic_t writing, handled;
static int interleaved, entered;

static void writer_enter(const elt_info *info, void *state)
{
	(void)info;
	(void)state;
	if (writing)
		interleaved++;
	else
		entered++;
}

static void instrumented_handler(int sig)
{
	(void)sig;
	elt_emit_enter(SIGNALED, NULL, NULL);
	elt_emit_leave(SIGNALED, NULL, NULL);
	handled++;
}

static void *writer_function_added(void *state, const elt_function_desc *fn)
{
	if (fn->id == ANNOUNCED) {
		writing = 1;
		raise(SIGINT);
		writing = 0;
	}
	return state;
}

ELT_PLUGIN_DEFINE(writer, .enter = writer_enter, .function_added = writer_function_added);
ELT_PLUGIN_DEFINE(later, .enter = later_enter, .fini = later_fini);

int main(void)
{
#if !defined(_WIN32)
	alarm(20);      /* a call that waits for itself ends the test here */
#endif
	tap_plan(13);
	is_int(elt_plugin_add(&elt_plugin_outer, NULL), ELT_OK, "a plugin whose init calls back");
	is_int(from_init_add, ELT_E_STATE, "elt_plugin_add from an init is refused");
	ok(strstr(from_init_message, "plugin inner: added from a plugin's init") != NULL,
	   "... saying why: %s", from_init_message);
	is_int(from_init_shutdown, ELT_E_STATE, "elt_shutdown from an init is refused");

	is_int(elt_plugin_add(&elt_plugin_inner, NULL), ELT_OK, "a plugin whose function_added "
	       "calls back");
	is_int(elt_register_function(0x10, "Outer", "v()", 0), ELT_OK,
	       "a registration that runs it");
	ok(from_added_register == ELT_E_STATE &&
	   strstr(from_added_message, "function 'Nested': registered from a plugin's "
		  "function_added") && !elt_find_function(0x99),
	   "registering from function_added is refused: %s", from_added_message);
	is_int(from_added_add, ELT_E_STATE, "elt_plugin_add from function_added is refused");

	elt_register_function(SIGNALED, "Signaled", "v()", 0);
	elt_plugin_add(&elt_plugin_writer, NULL);
	signal(SIGINT, instrumented_handler);
	elt_register_function(ANNOUNCED, "Announced", "v()", 0);
	is_int(handled, 1, "a signal raised in function_added is handled");
	is_int(interleaved, 0, "... its segment not reported into the function_added it "
	       "interrupted");
	elt_emit_enter(SIGNALED, NULL, NULL);
	elt_emit_leave(SIGNALED, NULL, NULL);
	is_int(entered, 1, "the same segment outside it is reported");
	signal(SIGINT, SIG_DFL);

	elt_plugin_add(&elt_plugin_stopper, NULL);
	elt_plugin_add(&elt_plugin_later, NULL);
	elt_emit_enter(0x10, NULL, NULL);
	ok(stopper_status == ELT_OK && later_finished,
	   "a callback shuts the library down: every fini ran");
	is_int(later_called_after_fini, 0, "no plugin after it in the segment is called "
	       "once its fini has run");
	return tap_done();
}
