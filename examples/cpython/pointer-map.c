/* The adapter's address-keyed tables (pointer-map.h). */
#include "pointer-map.h"

#include <stdint.h>
#include <stdlib.h>

#define INITIAL_CAPACITY 1024

/* Objects are 16-byte aligned: drop the bits that never change, then mix
 * (Fibonacci hashing spreads consecutive allocations over the table). */
static size_t slot_of(const struct pointer_map *map, const void *key)
{
	uint64_t h = ((uintptr_t)key >> 4) * UINT64_C(0x9e3779b97f4a7c15);

	return (size_t)(h >> 32) & map->mask;
}

void *pointer_map_get(const struct pointer_map *map, const void *key)
{
	if (!map->slots)
		return NULL;
	for (size_t i = slot_of(map, key);; i = (i + 1) & map->mask) {
		if (map->slots[i].key == key)
			return map->slots[i].value;
		if (!map->slots[i].key)
			return NULL;
	}
}

/* Keeps the load under one half, so probes stay short and one slot is
 * always empty (which ends every search). */
static bool grow(struct pointer_map *map)
{
	size_t capacity = map->slots ? 2 * (map->mask + 1) : INITIAL_CAPACITY;
	struct pointer_map_slot *old = map->slots;
	size_t old_capacity = old ? map->mask + 1 : 0;

	map->slots = calloc(capacity, sizeof(*map->slots));
	if (!map->slots) {
		map->slots = old;
		return false;
	}
	map->mask = capacity - 1;
	for (size_t i = 0; i < old_capacity; i++) {
		if (!old[i].key)
			continue;
		size_t j = slot_of(map, old[i].key);

		while (map->slots[j].key)
			j = (j + 1) & map->mask;
		map->slots[j] = old[i];
	}
	free(old);
	return true;
}

bool pointer_map_put(struct pointer_map *map, const void *key, void *value)
{
	if ((!map->slots || 2 * (map->count + 1) > map->mask + 1) && !grow(map))
		return false;
	size_t i = slot_of(map, key);

	while (map->slots[i].key && map->slots[i].key != key)
		i = (i + 1) & map->mask;
	if (!map->slots[i].key)
		map->count++;
	map->slots[i].key = key;
	map->slots[i].value = value;
	return true;
}

bool pointer_map_remove(struct pointer_map *map, const void *key)
{
	if (!map->slots)
		return false;
	size_t i = slot_of(map, key);

	while (map->slots[i].key != key) {
		if (!map->slots[i].key)
			return false;
		i = (i + 1) & map->mask;
	}
	/* Backward shift: move up each later entry of the run that would no
	 * longer be found past the hole. */
	for (size_t j = i;;) {
		j = (j + 1) & map->mask;
		if (!map->slots[j].key)
			break;
		size_t home = slot_of(map, map->slots[j].key);
		/* Movable when its home is not within (i, j], cyclically. */
		if (((j - home) & map->mask) >= ((j - i) & map->mask)) {
			map->slots[i] = map->slots[j];
			i = j;
		}
	}
	map->slots[i].key = NULL;
	map->slots[i].value = NULL;
	map->count--;
	return true;
}

void pointer_map_drain(struct pointer_map *map,
		       void (*fn)(const void *key, void *value))
{
	if (!map->slots)
		return;
	for (size_t i = 0; i <= map->mask; i++) {
		struct pointer_map_slot *slot = &map->slots[i];

		if (slot->key) {
			fn(slot->key, slot->value);
			slot->key = NULL;
			slot->value = NULL;
		}
	}
	map->count = 0;
}
