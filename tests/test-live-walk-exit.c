/*
 * A thread that ends while a plugin's fini lists the live invocations
 * (threads may end at any moment, shutdown or not): at its exit, its
 * invocations still in their first segment move from its stack into
 * records.  The walk copies the stacks' invocations first, calls the
 * plugin's function on the copies, then lists the records: the thread
 * here ends from inside that first call, so each of its invocations is
 * both among the copies and, by the time the records are read, in a
 * record.  Each must be listed once.
 */
#define ELT_PLUGIN_STATIC 1
#include "tap.h"

#include <asyncelt.h>
#include <asyncelt/plugin.h>

#include <pthread.h>
#include <stdatomic.h>
#include <time.h>

#define LEFT_OPEN 3             /* the invocations the thread ends inside */

static const elt_function_id WORK = 0x10;
static atomic_int entered, may_end;
static pthread_t ender;

static void pause_ms(int ms)
{
	nanosleep(&(struct timespec){ 0, ms * 1000000L }, NULL);
}

static void *end_inside(void *arg)
{
	int i;

	(void)arg;
	for (i = 0; i < LEFT_OPEN; i++)
		elt_emit_enter(WORK, NULL, NULL);       /* never left */
	atomic_store(&entered, 1);
	while (!atomic_load(&may_end))
		pause_ms(1);
	return NULL;
}

static uint64_t listed[64];
static unsigned nlisted, twice;
static int ended;

static void list_one(const elt_invocation *inv, const elt_function_desc *function,
		     void *slot, void *arg)
{
	unsigned i;

	(void)function;
	(void)slot;
	(void)arg;
	for (i = 0; i < nlisted; i++)
		twice += listed[i] == inv->id;
	if (nlisted < 64)
		listed[nlisted++] = inv->id;
	if (!ended) {           /* the thread ends between the copy and the records */
		ended = 1;
		atomic_store(&may_end, 1);
		pthread_join(ender, NULL);
	}
}

static elt_status walker_fini(void *state);
ELT_PLUGIN_DEFINE(walker, .fini = walker_fini);

static elt_status walker_fini(void *state)
{
	(void)state;
	elt_foreach_live_invocation(&elt_plugin_walker, list_one, NULL);
	return ELT_OK;
}

int main(void)
{
	tap_plan(3);
	if (elt_register_function(WORK, "Work", "v()", 0) != ELT_OK ||
	    elt_plugin_add(&elt_plugin_walker, NULL) != ELT_OK)
		tap_bail("setup: %s", elt_last_error());
	if (pthread_create(&ender, NULL, end_inside, NULL))
		tap_bail("pthread_create failed");
	while (!atomic_load(&entered))
		pause_ms(1);
	is_int(elt_shutdown(), ELT_OK, "shutdown, the thread ending during its fini's walk");
	ok(ended, "the walk listed something, and the thread ended from inside it");
	ok(nlisted == LEFT_OPEN && twice == 0,
	   "each of the %d invocations it ended inside listed once (%u listed, %u twice)",
	   LEFT_OPEN, nlisted, twice);
	return tap_done();
}
