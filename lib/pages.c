/*
 * Zeroed memory without malloc, for what a segment may need on its slow
 * steps (a thread's record, shadow stacks, invocation records and tables):
 * a segment may come from a signal handler that interrupted malloc.
 * Anonymous mappings come zeroed, take no lock in libc (mmap is a bare
 * system call on every libc we build with, though POSIX does not list it
 * as async-signal-safe), and errno is kept as the interrupted code had it.
 * Only whole chunks are mapped, never a single small object.
 */
#include "internal.h"

#include <errno.h>
#if defined(_WIN32)
# include <windows.h>
#else
# include <sys/mman.h>
#endif

void *elt_pages_map(size_t size)
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

void elt_pages_unmap(void *p, size_t size)
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
