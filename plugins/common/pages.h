/*
 * Zeroed memory for the plugins' rare slow steps inside a callback (a
 * thread's buffer, pools, histograms): mapped, not malloc'd, since a
 * segment may come from a signal handler that interrupted malloc, with
 * errno kept as the interrupted code had it (doc/runtime.md).  Shared by
 * the plugins, compiled into each.  lib/pages.c is its twin inside the
 * library: plugins, and the copies authors make of them, see only the
 * public API, and the library exports no allocator.
 */
#ifndef ELT_PLUGINS_PAGES_H
#define ELT_PLUGINS_PAGES_H

#include <errno.h>
#include <stddef.h>
#if defined(_WIN32)
# include <windows.h>
#else
# include <sys/mman.h>
#endif

/* NULL when there is none. */
static inline void *pages_map(size_t size)
{
#if defined(_WIN32)
	return VirtualAlloc(NULL, size, MEM_COMMIT | MEM_RESERVE, PAGE_READWRITE);
#else
	int saved_errno = errno;
	void *p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	errno = saved_errno;
	return p == MAP_FAILED ? NULL : p;
#endif
}

static inline void pages_unmap(void *p, size_t size)
{
	if (!p)
		return;
#if defined(_WIN32)
	(void)size;
	VirtualFree(p, 0, MEM_RELEASE);
#else
	munmap(p, size);
#endif
}

#endif
