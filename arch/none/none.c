/*
 * Hosts without helpers: the portable API (registration, signatures,
 * plugins) still works; nothing can be decoded since no helper saves
 * registers.
 */
#include "internal.h"

const char elt_arch_abi[] = "none";

static const char no_helpers[] = "this host has no helpers: nothing to decode";

static int place_return(struct elt_plan_builder *b, void *cursor, const elt_type *t,
			const char **why)
{
	(void)b;
	(void)cursor;
	(void)t;
	*why = no_helpers;
	return 0;
}

static int place_argument(struct elt_plan_builder *b, void *cursor,
			  const elt_type *t, int variadic, const char **why)
{
	(void)b;
	(void)cursor;
	(void)t;
	(void)variadic;
	*why = no_helpers;
	return 0;
}

const struct elt_abi_rules elt_arch_rules = {
	.place_return = place_return,
	.place_argument = place_argument,
	.undecoded_return_moves_arguments = 1,
};

uintptr_t elt_arch_return_address(const struct elt_info *info)
{
	(void)info;
	return 0;
}
