/*
 * Plugin option strings: "key=value,key=value", where an item that does
 * not start with a key and '=' continues the previous value
 * ("expect=Work:25,Other:3").
 */
#include "internal.h"

#include <string.h>

static int is_key_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	       (c >= '0' && c <= '9') || c == '_' || c == '-' || c == '.';
}

/* Length of the item at s: up to the next ',' or the end. */
static size_t item_length(const char *s)
{
	return strcspn(s, ",");
}

static int item_has_key(const char *s, size_t len)
{
	const char *eq = memchr(s, '=', len);
	const char *p;

	if (!eq || eq == s)
		return 0;
	for (p = s; p < eq; p++)
		if (!is_key_char(*p))
			return 0;
	return 1;
}

elt_status elt_option_next(const char **cursor, elt_option *opt)
{
	const char *s, *start;
	size_t len;

	if (!cursor || !opt)
		return elt_set_error(ELT_E_INVALID_ARGUMENT, "elt_option_next: NULL argument");
	memset(opt, 0, sizeof(*opt));
	s = *cursor;
	if (!s || !*s)
		return ELT_OK;
	start = s;
	len = item_length(s);
	if (len == 0)
		return elt_set_error(ELT_E_BAD_OPTION,
				     "empty option before ',' in \"%s\"", start);
	if (!item_has_key(s, len))
		return elt_set_error(ELT_E_BAD_OPTION,
				     "option \"%.*s\" is not key=value (keys are letters, "
				     "digits, '_', '-' and '.')", (int)len, s);
	opt->key = s;
	opt->key_len = (size_t)((const char *)memchr(s, '=', len) - s);
	opt->value = s + opt->key_len + 1;
	s += len;
	/* Items without a key belong to this value. */
	while (*s == ',') {
		size_t next = item_length(s + 1);

		if (next && item_has_key(s + 1, next))
			break;
		if (next == 0)
			return elt_set_error(ELT_E_BAD_OPTION,
					     "empty item after ',' in the value of \"%.*s\"",
					     (int)opt->key_len, opt->key);
		s += 1 + next;
	}
	opt->value_len = (size_t)(s - opt->value);
	*cursor = *s == ',' ? s + 1 : s;
	return ELT_OK;
}

int elt_option_is(const elt_option *opt, const char *key)
{
	return opt && opt->key && strlen(key) == opt->key_len &&
	       memcmp(opt->key, key, opt->key_len) == 0;
}

elt_status elt_option_number(const elt_option *opt, uint64_t min, uint64_t max,
			     uint64_t *out)
{
	uint64_t n = 0;
	size_t i;
	int ok;

	if (!opt || !opt->key || !out)
		return elt_set_error(ELT_E_INVALID_ARGUMENT, "elt_option_number: NULL argument");
	ok = opt->value_len > 0;
	for (i = 0; ok && i < opt->value_len; i++) {
		unsigned digit = (unsigned char)opt->value[i] - '0';

		ok = digit <= 9 && n <= (UINT64_MAX - digit) / 10;
		n = n * 10 + digit;
	}
	if (!ok || n < min || n > max)
		return elt_set_error(ELT_E_BAD_OPTION,
				     "%.*s: \"%.*s\" is not a number from %llu to %llu",
				     (int)opt->key_len, opt->key,
				     (int)(opt->value_len > 40 ? 40 : opt->value_len), opt->value,
				     (unsigned long long)min, (unsigned long long)max);
	*out = n;
	return ELT_OK;
}

elt_status elt_option_copy(const elt_option *opt, char *buf, size_t size)
{
	if (!opt || !opt->key || !buf || size == 0)
		return elt_set_error(ELT_E_INVALID_ARGUMENT,
				     "elt_option_copy: NULL argument or size 0");
	if (*buf)
		return elt_set_error(ELT_E_BAD_OPTION, "%.*s given twice",
				     (int)opt->key_len, opt->key);
	if (opt->value_len == 0 || opt->value_len >= size)
		return elt_set_error(ELT_E_BAD_OPTION, "%.*s: a value of 1 to %zu bytes, not %zu",
				     (int)opt->key_len, opt->key, size - 1, opt->value_len);
	memcpy(buf, opt->value, opt->value_len);
	buf[opt->value_len] = '\0';
	return ELT_OK;
}
