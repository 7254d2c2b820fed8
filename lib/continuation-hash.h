/*
 * Where the continuation table (invocation.c) keeps a continuation: its
 * geometry and its two hashes.  Apart from invocation.c, so that
 * tests/test-continuation-table.c can choose continuations that meet in
 * the same buckets and drive the table into its rarest paths on purpose.
 */
#ifndef ELT_CONTINUATION_HASH_H
#define ELT_CONTINUATION_HASH_H

#include <stdint.h>

#define ELT_TABLE_BUCKET 8              /* slots a bucket has */
#define ELT_TABLE_MIN_BITS 16           /* the first table: 2^16 slots */
#define ELT_TABLE_MIGRATE_STEP 1024     /* slots a suspension moves while
					   a table grows */

/* The two hashes; the bits 32 and up of each name a bucket, of
 * `elt_continuation_hash1`'s top four the tag.  Multiplication by an odd
 * constant can be undone, which is what lets the test pick the first
 * bucket. */
#define ELT_CONTINUATION_HASH1 0x9e3779b97f4a7c15ull
#define ELT_CONTINUATION_HASH2 0xbf58476d1ce4e5b9ull

static inline uint64_t elt_continuation_hash1(uint64_t k)
{
	return k * ELT_CONTINUATION_HASH1;
}

static inline uint64_t elt_continuation_hash2(uint64_t k)
{
	return (k ^ (k >> 29)) * ELT_CONTINUATION_HASH2;
}

/* The first slot of the bucket that hash h names in a table of `mask` + 1
 * slots. */
static inline uint64_t elt_continuation_bucket(uint64_t h, uint64_t mask)
{
	return (h >> 32) & mask & ~(uint64_t)(ELT_TABLE_BUCKET - 1);
}

#endif
