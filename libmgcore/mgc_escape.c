/* SPDX-License-Identifier: MIT */
/* mgc_escape.c: outside text made safe to print (see mgc_escape.h). One UTF-8 decoder decides
 * what is a character, what is a control and what is a bad byte, for text and JSON alike. It must
 * never read past the bytes it is given, nor write past the buffer it is given. */
#include "mgc_escape.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* The length of the valid UTF-8 character at s (at most n bytes), with its code point in *cp; 0
 * when s does not start one (a stray continuation byte, an overlong form, a surrogate, a code
 * point past U+10FFFF, or a sequence cut short). */
static size_t utf8_char(const unsigned char *s, size_t n, uint32_t *cp)
{
	static const uint32_t min[5] = {0, 0, 0x80, 0x800, 0x10000};
	unsigned char c = s[0];
	size_t len = c < 0x80 ? 1 : (c & 0xe0) == 0xc0 ? 2 : (c & 0xf0) == 0xe0 ? 3 :
		     (c & 0xf8) == 0xf0 ? 4 : 0;
	if (len == 0 || len > n)
		return 0;
	uint32_t v = len == 1 ? c : c & (0x7f >> len);
	for (size_t i = 1; i < len; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		v = v << 6 | (s[i] & 0x3f);
	}
	if (v < min[len] || v > 0x10ffff || (v >= 0xd800 && v <= 0xdfff))
		return 0;
	*cp = v;
	return len;
}

static int is_control(uint32_t cp)
{
	return cp < 0x20 || cp == 0x7f || (cp >= 0x80 && cp < 0xa0);
}

char *mgc_escape(char *out, size_t cap, const char *s, size_t n)
{
	static const char hex[] = "0123456789abcdef";
	const unsigned char *u = (const unsigned char *)s;
	size_t k = 0;
	if (cap == 0)
		return out;
	for (size_t i = 0; i < n;) {
		uint32_t cp = 0;
		size_t len = utf8_char(u + i, n - i, &cp);
		int escape = len == 0 || is_control(cp);
		size_t bytes = len ? len : 1, need = escape ? 4 * bytes : bytes;
		if (k + need >= cap)
			break;
		for (size_t j = 0; j < bytes; j++) {
			if (escape) {
				out[k++] = '\\';
				out[k++] = 'x';
				out[k++] = hex[u[i + j] >> 4];
				out[k++] = hex[u[i + j] & 15];
			} else {
				out[k++] = (char)u[i + j];
			}
		}
		i += bytes;
	}
	out[k] = 0;
	return out;
}

const char *mgc_esc(char *buf, size_t cap, const char *s)
{
	return s ? mgc_escape(buf, cap, s, strlen(s)) : NULL;
}

char *mgc_escape_dup(const char *s)
{
	size_t n = strlen(s);
	char *out = malloc(MGC_ESCAPED_MAX(n));
	return out ? mgc_escape(out, MGC_ESCAPED_MAX(n), s, n) : NULL;
}

char *mgc_json_clean(const char *json)
{
	static const char hex[] = "0123456789abcdef";
	const unsigned char *u = (const unsigned char *)json;
	size_t n = strlen(json);
	char *out = malloc(3 * n + 1); /* a bad byte grows to U+FFFD's 3; a C1's 2 bytes to 6 */
	if (!out)
		return NULL;
	size_t k = 0;
	for (size_t i = 0; i < n;) {
		uint32_t cp = 0;
		size_t len = utf8_char(u + i, n - i, &cp);
		if (len == 0) {
			memcpy(out + k, "\xef\xbf\xbd", 3);
			k += 3;
			i++;
		} else if (cp >= 0x80 && cp < 0xa0) {
			memcpy(out + k, "\\u00", 4);
			out[k + 4] = hex[cp >> 4];
			out[k + 5] = hex[cp & 15];
			k += 6;
			i += len;
		} else {
			memcpy(out + k, u + i, len);
			k += len;
			i += len;
		}
	}
	out[k] = 0;
	return out;
}
