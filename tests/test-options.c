/* Plugin option strings: elt_option_next() and elt_option_is(). */
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
	return tap_done();
}
