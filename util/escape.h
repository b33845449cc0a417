/* Text from the wire in what others read: a NodeDescription (64 bytes any host sets to
 * anything), a ServiceName. JSON must still parse and logs must stay one line per entry,
 * whatever the bytes. */
#ifndef IBSMD_UTIL_ESCAPE_H
#define IBSMD_UTIL_ESCAPE_H

#include <stddef.h>
#include <stdio.h>

/* The length (1-4) of the well-formed UTF-8 sequence at s (n bytes there), or 0 when s[0]
 * does not begin one (a stray continuation byte, an overlong form, a surrogate, beyond
 * U+10FFFF, cut short). */
size_t utf8_seq_len(const unsigned char *s, size_t n);

/* s (up to its NUL or max bytes) as a JSON string, quotes included (RFC 8259): '"' and '\'
 * escaped, control characters (C0, DEL, C1) as \uXXXX, U+2028/2029 too (JavaScript reads
 * them as line ends), and every byte that is not part of well-formed UTF-8 as \uFFFD. */
void json_put_str(FILE *out, const char *s, size_t max);

/* s (up to its NUL or max bytes) as a Prometheus label value, without the quotes: '\', '"'
 * and newline escaped as the text format asks, each byte that is not UTF-8 as U+FFFD (a
 * scraper refuses the whole page over one). */
void prom_put_label(FILE *out, const char *s, size_t max);

/* src for a log line, into dst (len bytes, always terminated; cut at a whole escape):
 * control characters, DEL, C1 controls and bytes that are not UTF-8 as \xNN, so that no
 * text can end a line or forge the next one. Returns dst. */
char *log_escape(char *dst, size_t len, const char *src);

/* Does s need log_escape at all? (The common case is no: it is copied as is.) */
int log_needs_escape(const char *s);

/* A NodeDescription (NUL-terminated) for a text dump that quotes or brackets it: desc itself
 * when it is plain, else escaped into buf (len bytes; 4 per byte of desc suffice) as
 * log_escape does, and '"', '\'', '\\', '{' and '}' as \xNN too, so that no description can
 * end its field or its line early. */
const char *text_desc(char *buf, size_t len, const char *desc);

#endif
