/*
 * Growing arrays: the one way the reader and the model make room.
 */
#ifndef ELT_DUMP_GROW_H
#define ELT_DUMP_GROW_H

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>

/* Makes *array (of *capacity items of `item` bytes) hold at least `need`
 * items, doubling; false, the array untouched, when out of memory or when
 * the size would not fit in a size_t (a damaged file can ask for that). */
static inline bool dump_grow(void **array, size_t *capacity, size_t need, size_t item)
{
	size_t cap = *capacity;
	void *bigger;

	if (need <= cap)
		return true;
	while (cap < need) {
		if (cap > SIZE_MAX / 2)
			return false;
		cap = cap ? 2 * cap : 256;
	}
	if (cap > SIZE_MAX / item)
		return false;
	bigger = realloc(*array, cap * item);
	if (!bigger)
		return false;
	*array = bigger;
	*capacity = cap;
	return true;
}

#endif
