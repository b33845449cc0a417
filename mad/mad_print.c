/* Printing decoded attributes from their field tables, for ibsa and logs. */
#include "mad/mad_layout.h"

#include "mad/link_speed.h"
#include "util/escape.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <inttypes.h>
#include <stdbool.h>
#include <string.h>

static uint64_t elem(const uint8_t *p, enum mad_ftype t, unsigned i)
{
	switch (t) {
	case MF_U8: return p[i];
	case MF_U16: {
		uint16_t v;
		memcpy(&v, p + 2 * i, 2);
		return v;
	}
	case MF_U32: {
		uint32_t v;
		memcpy(&v, p + 4 * i, 4);
		return v;
	}
	case MF_U64: {
		uint64_t v;
		memcpy(&v, p + 8 * i, 8);
		return v;
	}
	default: return 0;
	}
}

/* GUIDs, keys and masks read best in hex; small counts and LIDs in decimal. */
static bool hex_field(const struct mad_field *f)
{
	if (strstr(f->name, "violations"))
		return false;
	return f->type == MF_U64 || strstr(f->name, "mask") || strstr(f->name, "key") ||
	       strstr(f->name, "vendor") || strstr(f->name, "device") || strstr(f->name, "qpn") ||
	       strstr(f->name, "pkey") || strstr(f->name, "revision");
}

static void print_value(FILE *out, const struct mad_field *f, uint64_t v, bool json)
{
	if (hex_field(f)) {
		unsigned w = f->type == MF_U64   ? 16
		             : f->type == MF_U32 ? 8
		             : f->type == MF_U16 ? 4
		                                 : 2;
		fprintf(out, json ? "\"0x%0*" PRIx64 "\"" : "0x%0*" PRIx64, (int)w, v);
	} else {
		fprintf(out, "%" PRIu64, v);
		/* rate codes do not say their bandwidth: people read the Gb/s */
		const char *g = !json && !strcmp(f->name, "rate") && v <= MAD_RATE_MAX_CODE
		                    ? mad_rate_name((uint8_t)v)
		                    : NULL;
		if (g)
			fprintf(out, " (%s Gb/s)", g);
	}
}

static void print_bytes(FILE *out, const struct mad_field *f, const uint8_t *p, bool json)
{
	size_t n = f->bytes;
	if (f->type == MF_TEXT && json) {
		json_put_str(out, (const char *)p, n);
		return;
	}
	if (f->type == MF_TEXT) {
		fputc('"', out);
		for (size_t i = 0; i < n && p[i]; i++) {
			if (p[i] == '"' || p[i] == '\\')
				fprintf(out, "\\%c", p[i]);
			else if (isprint(p[i]))
				fputc(p[i], out);
			else
				fprintf(out, "\\x%02x", p[i]);
		}
		fputc('"', out);
		return;
	}
	if (n == 16) {
		char s[INET6_ADDRSTRLEN];
		inet_ntop(AF_INET6, p, s, sizeof(s));
		fprintf(out, json ? "\"%s\"" : "%s", s);
		return;
	}
	if (json)
		fputc('"', out);
	for (size_t i = 0; i < n; i++)
		fprintf(out, "%02x", p[i]);
	if (json)
		fputc('"', out);
}

static void print_rec(const struct mad_layout *l, const uint8_t *host, FILE *out, int indent,
                      const char *prefix)
{
	for (unsigned i = 0; i < l->nfields; i++) {
		const struct mad_field *f = &l->fields[i];
		const uint8_t *p = host + f->off;
		if (f->type == MF_NESTED) {
			print_rec(f->nested, p, out, indent, f->name);
			continue;
		}
		fprintf(out, "%*s%s%s%-*s ", indent, "", prefix ? prefix : "", prefix ? "." : "",
		        prefix ? 30 - (int)strlen(prefix) - 1 : 30, f->name);
		if (f->type == MF_BYTES || f->type == MF_TEXT) {
			print_bytes(out, f, p, false);
		} else if (f->count > 1) {
			for (unsigned k = 0; k < f->count; k++) {
				if (k)
					fputc(k % 16 ? ',' : ' ', out);
				print_value(out, f, elem(p, f->type, k), false);
			}
		} else {
			print_value(out, f, elem(p, f->type, 0), false);
		}
		fputc('\n', out);
	}
}

void mad_layout_print(const struct mad_layout *l, const void *host, FILE *out, int indent)
{
	print_rec(l, host, out, indent, NULL);
}

static void print_json_rec(const struct mad_layout *l, const uint8_t *host, FILE *out)
{
	fputc('{', out);
	for (unsigned i = 0; i < l->nfields; i++) {
		const struct mad_field *f = &l->fields[i];
		const uint8_t *p = host + f->off;
		fprintf(out, "%s\"%s\":", i ? "," : "", f->name);
		if (f->type == MF_NESTED) {
			print_json_rec(f->nested, p, out);
		} else if (f->type == MF_BYTES || f->type == MF_TEXT) {
			print_bytes(out, f, p, true);
		} else if (f->count > 1) {
			fputc('[', out);
			for (unsigned k = 0; k < f->count; k++) {
				if (k)
					fputc(',', out);
				print_value(out, f, elem(p, f->type, k), true);
			}
			fputc(']', out);
		} else {
			print_value(out, f, elem(p, f->type, 0), true);
		}
	}
	fputc('}', out);
}

void mad_layout_print_json(const struct mad_layout *l, const void *host, FILE *out)
{
	print_json_rec(l, host, out);
}
