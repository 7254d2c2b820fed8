/*
 * Windows' side of tests/test-dlopen.c: FreeLibrary() (a profiler
 * detached and unloaded) while a thread whose exit runs the library's
 * thread-specific-data destructor lives on.  The DLL pins itself at load,
 * as ELF's -z nodelete does there, so it stays loaded and the thread's
 * exit finds the destructor.
 *
 * This program is not linked with the library: it must be the
 * LoadLibrary() that loads it.
 */
#include "tap.h"

#include <pthread.h>
#include <windows.h>

static int (*set_error)(int status, const char *fmt, ...);
static HANDLE failed, closed;

/* Has a message (so its exit runs the destructor), then outlives the
 * FreeLibrary(). */
static void *fail_and_outlive(void *arg)
{
	set_error(2, "failed before the FreeLibrary()");
	SetEvent(failed);
	WaitForSingleObject(closed, INFINITE);
	return arg;
}

int main(void)
{
	HMODULE lib, again = NULL;
	pthread_t t;

	tap_plan(2);
	lib = LoadLibraryA(ELT_LIBRARY_DLL);
	if (!ok(lib != NULL, "LoadLibrary(%s)", ELT_LIBRARY_DLL))
		tap_bail("error %lu", (unsigned long)GetLastError());
	set_error = (int (*)(int, const char *, ...))(void (*)(void))GetProcAddress(lib,
										    "elt_set_error");
	if (!set_error)
		tap_bail("elt_set_error not exported");

	failed = CreateEventA(NULL, TRUE, FALSE, NULL);
	closed = CreateEventA(NULL, TRUE, FALSE, NULL);
	pthread_create(&t, NULL, fail_and_outlive, NULL);
	WaitForSingleObject(failed, INFINITE);
	FreeLibrary(lib);
	SetEvent(closed);
	pthread_join(t, NULL);
	ok(GetModuleHandleExA(0, ELT_LIBRARY_DLL, &again) && again == lib,
	   "after FreeLibrary() it stays loaded, and a thread with a message exited");
	return tap_done();
}
