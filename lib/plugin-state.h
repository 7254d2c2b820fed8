/*
 * elt_plugins_state: what a segment must know of the plugins, in one word
 * it reads once (plugin.c writes it, dispatch.c and the x86 helpers read
 * it).  The count of plugins in the table, whether any of them wants
 * invocations or may change the floating-point control state, and
 * whether the library has stopped; it only grows, like the table.  A
 * word of one plugin and no bit is the dispatcher's straight path, which
 * then needs no other load to know the library armed.  C and assembly.
 */
#ifndef ELT_PLUGIN_STATE_H
#define ELT_PLUGIN_STATE_H

#define ELT_PLUGINS_COUNT_MASK  0xff    /* ELT_MAX_PLUGINS fits */
#define ELT_PLUGINS_TRACKING   0x100    /* one lacks ELT_PLUGIN_NO_INVOCATIONS */
#define ELT_PLUGINS_FLOAT      0x200    /* one lacks ELT_PLUGIN_NO_FLOAT */
#define ELT_PLUGINS_STOPPED    0x400    /* elt_plugins_stop() ran: as
					   elt_armed down, for shutdown */

/* Where the helpers test ELT_PLUGINS_FLOAT with one byte instruction:
 * that byte of the little-endian word, that bit in it. */
#define ELT_PLUGINS_FLOAT_BYTE 1
#define ELT_PLUGINS_FLOAT_BIT  0x02

#endif
