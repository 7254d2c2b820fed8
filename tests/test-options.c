/* Plugin option strings: elt_option_next(), elt_option_is(),
 * elt_option_number() and elt_option_copy(). */
#include "tap.h"

#include <asyncelt/plugin.h>

/* Parses `text` and renders it as "key=[value];..." or "ERROR". */
static const char *render(const char *text)
{
	static char out[512];
	const char *cursor = text;
	elt_option opt;
	size_t n = 0;

	out[0] = '\0';
	for (;;) {
		elt_status st = elt_option_next(&cursor, &opt);

		if (st != ELT_OK)
			return "ERROR";
		if (!opt.key)
			return out;
		n += (size_t)snprintf(out + n, sizeof(out) - n, "%.*s=[%.*s];",
				      (int)opt.key_len, opt.key, (int)opt.value_len, opt.value);
	}
}

/* elt_option_number on "n=VALUE", from min to max: its result, or the
 * error's message. */
static const char *number_in(const char *value, uint64_t min, uint64_t max)
{
	static char text[256];
	char options[64];
	const char *cursor = options;
	elt_option opt;
	uint64_t n = 7;

	snprintf(options, sizeof(options), "n=%s,next=1", value);
	if (elt_option_next(&cursor, &opt) != ELT_OK)
		return "NOT AN OPTION";
	if (elt_option_number(&opt, min, max, &n) == ELT_OK)
		snprintf(text, sizeof(text), "%llu", (unsigned long long)n);
	else
		snprintf(text, sizeof(text), "%s%s", n == 7 ? "" : "(*out changed) ",
			 elt_last_error());
	return text;
}

static const char *number(const char *value)
{
	return number_in(value, 64, 1000);
}

static void test_number(void)
{
	const char *range = "is not a number from 64 to 1000";
	const char *bad[] = { "-5", "+100", " 100", "100 ", "0x100", "1e3", "", "63", "1001",
			      "18446744073709551615", "18446744073709551616",
			      "99999999999999999999999" };
	size_t i;

	is_str(number("64"), "64", "a number at the range's low end");
	is_str(number("1000"), "1000", "at its high end");
	is_str(number("0100"), "100", "leading zeros are digits");
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char want[128];

		snprintf(want, sizeof(want), "n: \"%s\" %s", bad[i], range);
		is_str(number(bad[i]), want, "refused: \"%s\"", bad[i]);
	}
	/* The whole range: overflow is caught, not wrapped. */
	is_str(number_in("18446744073709551615", 0, UINT64_MAX), "18446744073709551615",
	       "2^64 - 1 is in the whole range");
	is_str(number_in("18446744073709551616", 0, UINT64_MAX),
	       "n: \"18446744073709551616\" is not a number from 0 to 18446744073709551615",
	       "2^64 is not");
	is_str(number_in("100000000000000000000", 0, UINT64_MAX),
	       "n: \"100000000000000000000\" is not a number from 0 to 18446744073709551615",
	       "nor 10^20");
}

/* elt_option_copy of each option of `text` in turn into one buffer of
 * `size` bytes: the buffer, or the first error's message and the buffer
 * as that left it. */
static const char *copy(const char *text, size_t size)
{
	static char result[256];
	char buf[16] = "";
	const char *cursor = text;
	elt_option opt;

	memset(buf + 1, '#', sizeof(buf) - 2);  /* a copy without its NUL shows */
	while (elt_option_next(&cursor, &opt) == ELT_OK && opt.key)
		if (elt_option_copy(&opt, buf, size) != ELT_OK) {
			snprintf(result, sizeof(result), "%s [%s]", elt_last_error(), buf);
			return result;
		}
	snprintf(result, sizeof(result), "%s", buf);
	return result;
}

static void test_copy(void)
{
	elt_option opt = { "k", 1, "v", 1 };
	char buf[4] = "";

	is_str(copy("output=abc", 4), "abc", "a value that fits, its NUL the last byte");
	is_str(copy("output=abcd", 4), "output: a value of 1 to 3 bytes, not 4 []",
	       "one byte more is refused, not cut short");
	is_str(copy("output=", 4), "output: a value of 1 to 3 bytes, not 0 []",
	       "an empty value is refused");
	is_str(copy("output=a,output=b", 4), "output given twice [a]",
	       "a second value is refused, the first kept");
	is_int(elt_option_copy(&opt, buf, 0), ELT_E_INVALID_ARGUMENT, "size 0");
	is_int(elt_option_copy(NULL, buf, 4), ELT_E_INVALID_ARGUMENT, "NULL option");
	is_int(elt_option_copy(&opt, NULL, 4), ELT_E_INVALID_ARGUMENT, "NULL buffer");
	is_str(buf, "", "the buffer untouched by the refusals");
}

int main(void)
{
	const char *cursor;
	elt_option opt;

	is_str(render(""), "", "empty string: no options");
	is_str(render("a=1"), "a=[1];", "one option");
	is_str(render("a=1,b=two"), "a=[1];b=[two];", "two options");
	is_str(render("expect=Work:25,WorkVoid:3,WorkDouble:3"),
	       "expect=[Work:25,WorkVoid:3,WorkDouble:3];",
	       "items without '=' continue the value");
	is_str(render("expect=Work:25,Other:3,output=x.txt"),
	       "expect=[Work:25,Other:3];output=[x.txt];", "a list, then another key");
	is_str(render("path=/tmp/a=b"), "path=[/tmp/a=b];", "'=' inside a value");
	is_str(render("a="), "a=[];", "empty value");
	is_str(render("out=trace.%p.json"), "out=[trace.%p.json];", "%p kept for the plugin");
	is_str(render("noequals"), "ERROR", "a first item without '=' is an error");
	is_str(render("=1"), "ERROR", "an empty key is an error");
	is_str(render("a=1,,b=2"), "ERROR", "an empty item is an error");
	is_str(render("a=1,"), "ERROR", "a trailing ',' is an error");
	is_str(render("a b=1"), "ERROR", "a key with a space is an error");

	cursor = "noequals";
	ok(elt_option_next(&cursor, &opt) == ELT_E_BAD_OPTION &&
	   strstr(elt_last_error(), "noequals"), "the error names the bad item: %s",
	   elt_last_error());
	ok(elt_option_next(NULL, &opt) == ELT_E_INVALID_ARGUMENT, "NULL cursor");

	cursor = "output=a,quiet=1";
	elt_option_next(&cursor, &opt);
	ok(elt_option_is(&opt, "output") && !elt_option_is(&opt, "out") &&
	   !elt_option_is(&opt, "outputs"), "elt_option_is matches the whole key");
	test_number();
	test_copy();
	return tap_done();
}
