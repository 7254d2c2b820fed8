/*
 * Function registration, its errors, the lock-free lookup under
 * concurrent registration, status strings and versions.
 */
#include "tap.h"

#include <asyncelt.h>
#include <asyncelt/plugin.h>

#include <pthread.h>
#include <stdatomic.h>

#define THREADS 4
#define PER_THREAD 5000

static void *register_many(void *arg)
{
	uintptr_t base = (uintptr_t)arg;
	uintptr_t i;

	for (i = 0; i < PER_THREAD; i++)
		if (elt_register_function(base + i * 16, "many", "i(i)", 0) != ELT_OK)
			return (void *)1;
	return NULL;
}

static _Atomic int stop_lookups;
static unsigned long lookups_found;

/* Looks functions up while the table grows under it. */
static void *look_up(void *arg)
{
	(void)arg;
	while (!stop_lookups) {
		uintptr_t t, i;

		for (t = 0; t < THREADS; t++)
			for (i = 0; i < PER_THREAD; i += 97) {
				const elt_function_desc *d =
					elt_find_function((t + 1) << 24 | i * 16);
				if (d && d->id != ((t + 1) << 24 | i * 16))
					return (void *)1;   /* a wrong record */
				lookups_found += d != NULL;
			}
	}
	return NULL;
}

static void test_concurrent(void)
{
	pthread_t writers[THREADS], reader;
	void *result, *reader_result;
	int failed = 0;
	uintptr_t t, i;
	unsigned long missing = 0;

	pthread_create(&reader, NULL, look_up, NULL);
	for (t = 0; t < THREADS; t++)
		pthread_create(&writers[t], NULL, register_many, (void *)((t + 1) << 24));
	for (t = 0; t < THREADS; t++) {
		pthread_join(writers[t], &result);
		failed |= result != NULL;
	}
	stop_lookups = 1;
	pthread_join(reader, &reader_result);
	ok(!failed, "%d threads registered %d functions each", THREADS, PER_THREAD);
	ok(reader_result == NULL, "lookups during growth never saw a wrong record (%lu hits)",
	   lookups_found);
	for (t = 0; t < THREADS; t++)
		for (i = 0; i < PER_THREAD; i++)
			missing += elt_find_function((t + 1) << 24 | i * 16) == NULL;
	is_int(missing, 0, "every function is found afterwards");
}

int main(void)
{
	const elt_function_desc *d;
	elt_status st;
	int i;

	is_int(elt_version_number(), ELT_VERSION_NUMBER, "run-time version number");
	is_str(elt_version_string(), ELT_VERSION_STRING, "run-time version string");
	ok(elt_abi_name() && *elt_abi_name(), "ABI name: %s", elt_abi_name());
	for (i = 0; i < ELT_STATUS_COUNT; i++)
		if (strcmp(elt_strerror((elt_status)i), "unknown status") == 0)
			break;
	is_int(i, ELT_STATUS_COUNT, "every status has a string");
	is_str(elt_strerror((elt_status)1000), "unknown status", "out-of-range status");
	is_str(elt_segment_kind_name(ELT_SEGMENT_SUSPEND), "suspend", "segment kind names");

	is_int(elt_register_function(0x10, "First", "l(i d)", 0), ELT_OK, "register");
	d = elt_find_function(0x10);
	ok(d && strcmp(d->name, "First") == 0 && d->signature && d->signature->nparams == 2 &&
	   d->flags == 0 && d->index == 0, "found with its name, signature, flags, index 0");
	is_int(elt_register_function(0x20, "Second", NULL, 0), ELT_OK,
	       "register without a signature");
	d = elt_find_function(0x20);
	ok(d && d->signature == NULL && d->index == 1, "no signature, index 1");
	ok(elt_find_function(0x30) == NULL, "an unknown id is not found");

	st = elt_register_function(0x10, "Again", NULL, 0);
	ok(st == ELT_E_EXISTS && strstr(elt_last_error(), "0x10"),
	   "a second registration of an id: %s", elt_last_error());
	is_int(elt_register_function(0, "Zero", NULL, 0), ELT_E_INVALID_ARGUMENT, "id 0 refused");
	is_int(elt_register_function(0x40, "Flags", NULL, 0x80), ELT_E_INVALID_ARGUMENT,
	       "unknown flags refused");
	st = elt_register_function(0x50, "Broken", "l(i{", 0);
	ok(st == ELT_E_BAD_SIGNATURE && strstr(elt_last_error(), "Broken") &&
	   strstr(elt_last_error(), "l(i{"), "a malformed signature names the function "
	   "and the text: %s", elt_last_error());
	ok(elt_find_function(0x50) == NULL, "a refused function is not registered");
	st = elt_register_function(0x60, "AsyncNoK", "l(i)", ELT_FUNCTION_ASYNC);
	ok(st == ELT_E_BAD_SIGNATURE && strstr(elt_last_error(), "K"),
	   "async without K: %s", elt_last_error());
	st = elt_register_function(0x61, "AsyncNoSig", NULL, ELT_FUNCTION_ASYNC);
	is_int(st, ELT_E_BAD_SIGNATURE, "async without a signature");
	st = elt_register_function(0x70, "KNotAsync", "l(K i)", 0);
	ok(st == ELT_E_BAD_SIGNATURE && strstr(elt_last_error(), "ELT_FUNCTION_ASYNC"),
	   "K without the async flag: %s", elt_last_error());
	st = elt_register_function(0x80, "Async", "v(T K i)", ELT_FUNCTION_ASYNC);
	if (strcmp(elt_abi_name(), "none") == 0)
		is_int(st, ELT_OK, "async without helpers: accepted, a producer "
		       "(elt_emit_enter) passes K itself");
	else
		is_int(st, ELT_OK, "async with this and K");

	test_concurrent();
	return tap_done();
}
