/*
 * A map from object addresses to pointers, for the adapter's two tables:
 * the code objects registered with libasyncelt and the coroutines seen
 * suspending.  Open addressing with linear probing and backward-shift
 * deletion (no tombstones, so lookups stay short however many removals).
 *
 * Not thread-safe: every caller holds the GIL.
 */
#ifndef ASYNCELT_CPYTHON_POINTER_MAP_H
#define ASYNCELT_CPYTHON_POINTER_MAP_H

#include <stdbool.h>
#include <stddef.h>

struct pointer_map_slot {
	const void *key;        /* NULL: empty */
	void *value;
};

struct pointer_map {
	struct pointer_map_slot *slots;
	size_t mask;            /* capacity - 1; capacity is a power of two */
	size_t count;
};

/* NULL when absent.  Keys are never NULL. */
void *pointer_map_get(const struct pointer_map *map, const void *key);
/* Adds or replaces; false when the table could not grow (nothing added). */
bool pointer_map_put(struct pointer_map *map, const void *key, void *value);
/* Removes `key`; true if it was there. */
bool pointer_map_remove(struct pointer_map *map, const void *key);
/* Calls fn on every entry, then empties the map (keeping its memory). */
void pointer_map_drain(struct pointer_map *map,
		       void (*fn)(const void *key, void *value));

#endif
