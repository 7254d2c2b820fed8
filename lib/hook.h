/*
 * Which helper built a frame.  Shared by C and assembly: defines only.
 * The values are the .NET profiler's ENTER/LEAVE/TAILCALL flags.
 */
#ifndef ELT_HOOK_H
#define ELT_HOOK_H

#define ELT_HOOK_ENTER    1
#define ELT_HOOK_LEAVE    2
#define ELT_HOOK_TAILCALL 4

#endif
