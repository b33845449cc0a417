#include "util/escape.h"

#include <stdint.h>
#include <stdbool.h>
#include <string.h>

size_t utf8_seq_len(const unsigned char *s, size_t n)
{
	if (!n)
		return 0;
	unsigned char c = s[0];
	if (c < 0x80)
		return 1;
	size_t len;
	uint32_t cp;
	if (c >= 0xc2 && c <= 0xdf) {
		len = 2;
		cp = c & 0x1f;
	} else if (c >= 0xe0 && c <= 0xef) {
		len = 3;
		cp = c & 0x0f;
	} else if (c >= 0xf0 && c <= 0xf4) {
		len = 4;
		cp = c & 0x07;
	} else {
		return 0; /* a continuation byte, 0xc0/0xc1 (overlong) or 0xf5.. */
	}
	if (n < len)
		return 0;
	for (size_t i = 1; i < len; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (s[i] & 0x3f);
	}
	if ((len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000) || cp > 0x10ffff ||
	    (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	return len;
}

/* The code point of a sequence utf8_seq_len accepted. */
static uint32_t utf8_cp(const unsigned char *s, size_t len)
{
	static const unsigned char lead_mask[] = {0, 0x7f, 0x1f, 0x0f, 0x07};
	uint32_t cp = s[0] & lead_mask[len];
	for (size_t i = 1; i < len; i++)
		cp = cp << 6 | (s[i] & 0x3f);
	return cp;
}

static size_t bounded_len(const char *s, size_t max)
{
	const char *z = memchr(s, 0, max);
	return z ? (size_t)(z - s) : max;
}

void json_put_str(FILE *out, const char *s, size_t max)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t n = bounded_len(s, max);
	fputc('"', out);
	for (size_t i = 0; i < n;) {
		size_t len = utf8_seq_len(p + i, n - i);
		if (!len) {
			/* U+FFFD, not \u00XX: a stray byte must not pass for the Latin-1 letter of
			 * that number (and so for another node's well-formed name) */
			fputs("\\ufffd", out);
			i++;
			continue;
		}
		uint32_t cp = utf8_cp(p + i, len);
		if (cp == '"' || cp == '\\')
			fprintf(out, "\\%c", (char)cp);
		else if (cp < 0x20 || (cp >= 0x7f && cp <= 0x9f) || cp == 0x2028 || cp == 0x2029)
			fprintf(out, "\\u%04x", (unsigned)cp);
		else
			fwrite(p + i, 1, len, out);
		i += len;
	}
	fputc('"', out);
}

void prom_put_label(FILE *out, const char *s, size_t max)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t n = bounded_len(s, max);
	for (size_t i = 0; i < n;) {
		size_t len = utf8_seq_len(p + i, n - i);
		if (!len) {
			fputs("\xef\xbf\xbd", out); /* U+FFFD */
			i++;
		} else if (p[i] == '\\' || p[i] == '"') {
			fputc('\\', out);
			fputc(p[i++], out);
		} else if (p[i] == '\n') {
			fputs("\\n", out);
			i++;
		} else {
			fwrite(p + i, 1, len, out);
			i += len;
		}
	}
}

/* What a text dump quotes or brackets a NodeDescription with (ibnetdiscover's "...",
 * opensm-subnet.lst's {...}, the LFT dump's '...'), and the escape itself. */
static const char text_special[] = "\"'\\{}";

/* Bytes of s from i that go out as they are (0: escape the byte at i). */
static size_t plain(const unsigned char *s, size_t n, size_t i, bool text)
{
	if (text && strchr(text_special, s[i]) && s[i])
		return 0;
	size_t len = utf8_seq_len(s + i, n - i);
	if (!len)
		return 0;
	uint32_t cp = utf8_cp(s + i, len);
	if (cp < 0x20 || (cp >= 0x7f && cp <= 0x9f))
		return 0;
	return len;
}

static int needs_escape(const char *s, bool text)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t n = strlen(s);
	for (size_t i = 0; i < n;) {
		if (p[i] >= 0x20 && p[i] < 0x7f && !(text && strchr(text_special, p[i]))) {
			i++; /* the usual: plain ASCII */
			continue;
		}
		size_t len = plain(p, n, i, text);
		if (!len)
			return 1;
		i += len;
	}
	return 0;
}

int log_needs_escape(const char *s)
{
	return needs_escape(s, false);
}

static char *escape(char *dst, size_t len, const char *src, bool text)
{
	const unsigned char *p = (const unsigned char *)src;
	size_t n = strlen(src), at = 0;
	if (!len)
		return dst;
	for (size_t i = 0; i < n;) {
		size_t k = plain(p, n, i, text);
		if (k) {
			if (at + k >= len)
				break;
			memcpy(dst + at, p + i, k);
			at += k;
			i += k;
		} else {
			if (at + 4 >= len)
				break;
			static const char hex[] = "0123456789abcdef";
			dst[at++] = '\\';
			dst[at++] = 'x';
			dst[at++] = hex[p[i] >> 4];
			dst[at++] = hex[p[i] & 15];
			i++;
		}
	}
	dst[at] = 0;
	return dst;
}

char *log_escape(char *dst, size_t len, const char *src)
{
	return escape(dst, len, src, false);
}

const char *text_desc(char *buf, size_t len, const char *desc)
{
	return needs_escape(desc, true) ? escape(buf, len, desc, true) : desc;
}
