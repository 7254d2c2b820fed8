/*
 * The value formatter (elt_format_value, lib/format.c).  Input: a flags
 * byte (bit 0: JSON), a buffer size byte, a signature, a NUL, then the bytes
 * of its values: the return type's, then each parameter's.  Whatever the
 * bytes, the text is the same at every buffer size (truncated, always
 * terminated, its full length returned), reads no byte past the value, and
 * in JSON mode is one valid JSON value.
 */
#include "fuzz.h"

#include <asyncelt.h>

#include <string.h>

/* Types whose text would be megabytes ({b[100000000]}) are left out. */
#define MAX_VALUE_SIZE 4096
#define MAX_TEXT (1u << 20)

/* --- a strict JSON (RFC 8259) recogniser: returns the end of the value ---- */

static const char *json_value(const char *p, unsigned depth);

static const char *json_space(const char *p)
{
	while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')
		p++;
	return p;
}

static const char *json_string(const char *p)
{
	if (*p++ != '"')
		return NULL;
	for (; *p != '"'; p++) {
		if ((unsigned char)*p < 0x20)
			return NULL;
		if (*p == '\\') {
			p++;
			if (*p == 'u') {
				int i;

				for (i = 1; i <= 4; i++)
					if (!strchr("0123456789abcdefABCDEF", p[i]) || !p[i])
						return NULL;
				p += 4;
			} else if (!*p || !strchr("\"\\/bfnrt", *p)) {
				return NULL;
			}
		}
	}
	return p + 1;
}

static const char *json_digits(const char *p)
{
	const char *start = p;

	while (*p >= '0' && *p <= '9')
		p++;
	return p > start ? p : NULL;
}

static const char *json_number(const char *p)
{
	if (*p == '-')
		p++;
	if (*p == '0')
		p++;
	else if (!(p = json_digits(p)))
		return NULL;
	if (*p == '.' && !(p = json_digits(p + 1)))
		return NULL;
	if (*p == 'e' || *p == 'E') {
		p++;
		if (*p == '+' || *p == '-')
			p++;
		p = json_digits(p);
	}
	return p;
}

/* '[' values ']' or '{' "key": value '}' */
static const char *json_container(const char *p, unsigned depth)
{
	char close = *p == '[' ? ']' : '}';

	p = json_space(p + 1);
	if (*p == close)
		return p + 1;
	for (;;) {
		if (close == '}') {
			if (!(p = json_string(p)))
				return NULL;
			p = json_space(p);
			if (*p++ != ':')
				return NULL;
		}
		if (!(p = json_value(p, depth + 1)))
			return NULL;
		p = json_space(p);
		if (*p == close)
			return p + 1;
		if (*p++ != ',')
			return NULL;
	}
}

static const char *json_value(const char *p, unsigned depth)
{
	if (depth > 100)
		return NULL;
	p = json_space(p);
	switch (*p) {
	case '[': case '{':
		return json_container(p, depth);
	case '"':
		return json_string(p);
	case 't':
		return strncmp(p, "true", 4) ? NULL : p + 4;
	case 'f':
		return strncmp(p, "false", 5) ? NULL : p + 5;
	case 'n':
		return strncmp(p, "null", 4) ? NULL : p + 4;
	default:
		return json_number(p);
	}
}

/* --- the harness ---------------------------------------------------------- */

static char text[MAX_TEXT], small[256];

/* Formats the value at `bytes` (exactly t->size bytes, in their own
 * allocation) and checks the text. */
static void check_value(const elt_type *t, const uint8_t *bytes, unsigned flags,
			size_t small_size)
{
	void *value = malloc(t->size ? t->size : 1);
	size_t n, again;

	if (!value)
		abort();
	memcpy(value, bytes, t->size);
	n = elt_format_value(t, value, flags, text, sizeof(text));
	FUZZ_CHECK(strlen(text) == (n < sizeof(text) ? n : sizeof(text) - 1),
		   "returned %zu, wrote %zu", n, strlen(text));
	/* A long text ({}[2000000000]) is checked as far as it was kept. */
	if ((flags & ELT_FORMAT_JSON) && n < sizeof(text)) {
		const char *end = json_value(text, 0);

		FUZZ_CHECK(end && !*json_space(end), "not one JSON value: %s", text);
	}
	memset(small, 0x7f, sizeof(small));
	again = elt_format_value(t, value, flags, small, small_size);
	FUZZ_CHECK(again == n, "%zu bytes in a %zu-byte buffer, %zu in a large one",
		   again, small_size, n);
	if (small_size) {
		size_t kept = n < small_size - 1 ? n : small_size - 1;     /* < sizeof(text) */

		FUZZ_CHECK(small[kept] == 0 && memcmp(small, text, kept) == 0,
			   "the %zu-byte buffer does not hold the text's start", small_size);
	}
	FUZZ_CHECK(small_size == sizeof(small) || small[small_size] == 0x7f,
		   "wrote past a %zu-byte buffer", small_size);
	free(value);
}

FUZZ_HARNESS(format)
{
	const uint8_t *nul;
	elt_signature *sig;
	unsigned flags;
	size_t small_size, left;
	const uint8_t *bytes;
	uint32_t i;

	if (size < 2)
		return 0;
	flags = data[0] & 1 ? ELT_FORMAT_JSON : 0;
	small_size = data[1];
	data += 2;
	size -= 2;
	nul = memchr(data, 0, size);
	if (!nul)
		return 0;
	if (elt_signature_parse((const char *)data, &sig, NULL) != ELT_OK)
		return 0;
	bytes = nul + 1;
	left = size - (size_t)(bytes - data);
	/* the return type, then each parameter, while bytes remain */
	for (i = 0; i <= sig->nparams; i++) {
		const elt_type *t = i == 0 ? sig->ret : sig->params[i - 1];

		if (t->size > MAX_VALUE_SIZE || t->size > left)
			break;
		check_value(t, bytes, flags, small_size);
		bytes += t->size;
		left -= t->size;
	}
	elt_signature_free(sig);
	return 0;
}
