/*
 * Hosts without helpers: the portable API (registration, signatures,
 * plugins) still works; nothing can be decoded since no helper saves
 * registers.
 */
#include "internal.h"

const char elt_arch_abi[] = "none";

elt_status elt_arch_classify(const elt_signature *sig, struct elt_plan_builder *b)
{
	if (sig) {
		elt_plan_return_unsupported(b, "this host has no helpers: nothing to decode");
		elt_plan_arguments_unsupported(b, "this host has no helpers: nothing to decode");
	}
	return ELT_OK;
}

uintptr_t elt_arch_return_address(const struct elt_info *info)
{
	(void)info;
	return 0;
}
