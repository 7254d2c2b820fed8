/*
 * The demo's methods, as a JIT would emit them: each an instance of this
 * ABI's method shell (examples/method-shell/), which calls the real
 * elt_helper_enter and elt_helper_leave around the C body.
 */
#include "asm.h"
#include "../method-shell/shell.h"

	.text
	SHELL_METHOD demo_Main, demo_main_body, SHELL_RET_INT, demo_continuation_clobbered
	SHELL_METHOD demo_Request, demo_request_body, SHELL_RET_INT, demo_continuation_clobbered
	SHELL_METHOD demo_Fetch, demo_fetch_body, SHELL_RET_INT, demo_continuation_clobbered
	SHELL_METHOD demo_Lookup, demo_lookup_body, SHELL_RET_INT, demo_continuation_clobbered
	SHELL_METHOD demo_Score, demo_score_body, SHELL_RET_DOUBLE, demo_continuation_clobbered
	SHELL_METHOD demo_Log, demo_log_body, SHELL_RET_VOID, demo_continuation_clobbered

	SHELL_INVOKE demo_invoke

	ELT_OBJECT_NOTES
