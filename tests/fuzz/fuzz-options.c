/*
 * Plugin option strings (elt_option_next, lib/options.c): every option
 * given lies inside the string, in order, with a well-formed key; the
 * iteration ends, at the string's end or with ELT_E_BAD_OPTION.
 */
#include "fuzz.h"

#include <asyncelt.h>
#include <asyncelt/plugin.h>

#include <string.h>

static int is_key_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	       (c >= '0' && c <= '9') || c == '_' || c == '-' || c == '.';
}

FUZZ_HARNESS(options)
{
	char *text = fuzz_string(data, size);
	const char *cursor = text, *end;
	elt_option opt;
	elt_status st;
	size_t i, n = 0;

	if (!text)
		return 0;
	end = text + size;
	for (;;) {
		const char *before = cursor;

		st = elt_option_next(&cursor, &opt);
		if (st != ELT_OK || !opt.key)
			break;
		n++;
		FUZZ_CHECK(n <= size, "more options than bytes");
		FUZZ_CHECK(cursor > before && cursor <= end, "the cursor did not advance");
		FUZZ_CHECK(opt.key == before, "option %zu does not start at the cursor", n);
		FUZZ_CHECK(opt.key_len > 0 && opt.key[opt.key_len] == '=', "key of %zu bytes",
			   opt.key_len);
		for (i = 0; i < opt.key_len; i++)
			FUZZ_CHECK(is_key_char(opt.key[i]), "key byte %#x", (unsigned char)opt.key[i]);
		FUZZ_CHECK(opt.value == opt.key + opt.key_len + 1 &&
			   opt.value + opt.value_len <= end, "value outside the string");
		FUZZ_CHECK(opt.value + opt.value_len == cursor ||
			   (opt.value[opt.value_len] == ',' && opt.value + opt.value_len + 1 == cursor),
			   "the value does not end where the next option starts");
		FUZZ_CHECK(elt_option_is(&opt, "x") == (opt.key_len == 1 && opt.key[0] == 'x'),
			   "elt_option_is");
	}
	if (st == ELT_OK) {
		FUZZ_CHECK(*cursor == 0, "ended before the end of the string");
	} else {
		FUZZ_CHECK(st == ELT_E_BAD_OPTION, "status %s", elt_strerror(st));
		FUZZ_CHECK(elt_last_error()[0], "refused without a message");
	}
	free(text);
	return 0;
}
