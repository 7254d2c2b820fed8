/*
 * Whether an address is in one of this process's mappings, read from
 * /proc/self/maps (Linux; qemu-user lists the guest's own): for the
 * tests that check a page was given back.  Header-only.
 */
#ifndef ELT_TESTS_MAPPED_H
#define ELT_TESTS_MAPPED_H

#include <stdint.h>
#include <stdio.h>

/* 1 or 0; -1 when there is no /proc/self/maps. */
static inline int mapped(uintptr_t p)
{
	FILE *f = fopen("/proc/self/maps", "r");
	unsigned long long start, end;
	char line[512];
	int found = 0;

	if (!f)
		return -1;
	while (!found && fgets(line, sizeof(line), f))
		found = sscanf(line, "%llx-%llx", &start, &end) == 2 && p >= start && p < end;
	fclose(f);
	return found;
}

#endif
