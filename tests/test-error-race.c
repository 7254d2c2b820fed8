/*
 * A thread's first failure, interrupted between the mapping of its
 * message's page and its claim by a failure of its own (as a signal
 * handler's callback may fail there; here, from the test point, linked
 * with the library built with its test points live, lib/test-points.h).
 * The interrupting failure's page is the thread's; the interrupted one
 * writes into it and gives its own page back.
 */
#include "mapped.h"
#include "tap.h"
#include "../lib/test-points.h"

#include <asyncelt.h>
#include <asyncelt/plugin.h>

#include <pthread.h>
#include <stdint.h>

static uintptr_t first_page;    /* what the interrupted failure mapped */
static const char *inner_page;  /* where the interrupting one wrote */

static void interrupt(enum elt_test_point point, uintptr_t page)
{
	if (point != ELT_POINT_MESSAGE_MAPPED || first_page)
		return;
	first_page = page;
	elt_set_error(ELT_E_STATE, "the interrupting failure");
	inner_page = elt_last_error();
}

static void *fail_first(void *arg)
{
	elt_test_hook = interrupt;
	elt_set_error(ELT_E_INVALID_ARGUMENT, "the interrupted failure");
	elt_test_hook = NULL;
	is_str(elt_last_error(), "the interrupted failure", "the interrupted failure's message is the one left");
	ok(first_page && inner_page && elt_last_error() == inner_page,
	   "in the interrupting failure's page, the thread's one page");
	if (mapped(first_page) < 0)
		tap_skip(1, "no /proc/self/maps here");
	else
		ok(first_page != (uintptr_t)inner_page && !mapped(first_page),
		   "the page the interrupted failure mapped is given back");
	return arg;
}

int main(void)
{
	pthread_t t;

	tap_plan(3);
	pthread_create(&t, NULL, fail_first, NULL);     /* a thread with no message yet */
	pthread_join(t, NULL);
	return tap_done();
}
