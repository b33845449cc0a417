/* GUID lists and LFT dumps (see files.h). Hand-written: two line formats of a few fields
 * each, for which no library is a better fit than a loop over lines. */
#include "routing/files.h"

#include <ctype.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/vec.h"

int routing_slurp(const char *path, size_t max, char **text, size_t *len, char *why, size_t whylen)
{
	FILE *f = fopen(path, "r");
	if (!f) {
		snprintf(why, whylen, "%s: %s", path, strerror(errno));
		return -1;
	}
	size_t cap = 4096, n = 0;
	char *buf = malloc(cap + 1);
	while (buf) {
		if (n == cap) {
			if (cap >= max) {
				snprintf(why, whylen, "%s: larger than %zu bytes", path, max);
				free(buf);
				fclose(f);
				return -1;
			}
			cap = cap * 2 > max ? max : cap * 2;
			char *nb = realloc(buf, cap + 1);
			if (!nb) {
				free(buf);
				buf = NULL;
				break;
			}
			buf = nb;
		}
		size_t got = fread(buf + n, 1, cap - n, f);
		n += got;
		if (got == 0)
			break;
	}
	bool err = ferror(f);
	fclose(f);
	if (!buf || err) {
		snprintf(why, whylen, "%s: %s", path, buf ? "read error" : "out of memory");
		free(buf);
		return -1;
	}
	buf[n] = 0;
	*text = buf;
	*len = n;
	return 0;
}

bool routing_next_line(const char *text, size_t len, size_t *pos, char *line, size_t size)
{
	if (*pos >= len)
		return false;
	size_t s = *pos, e = s;
	while (e < len && text[e] != '\n')
		e++;
	size_t n = e - s < size - 1 ? e - s : size - 1;
	memcpy(line, text + s, n);
	line[n] = 0;
	*pos = e < len ? e + 1 : e;
	return true;
}

static char *skip_space(char *p)
{
	while (*p == ' ' || *p == '\t' || *p == '\r')
		p++;
	return p;
}

/* A hexadecimal number of at most 16 digits, 0x optional; the end in *end. */
static bool parse_hex(char *p, uint64_t *v, char **end)
{
	if (p[0] == '0' && (p[1] == 'x' || p[1] == 'X'))
		p += 2;
	uint64_t x = 0;
	unsigned digits = 0;
	while (isxdigit((unsigned char)*p)) {
		if (++digits > 16)
			return false;
		unsigned d = isdigit((unsigned char)*p)
		                 ? (unsigned)(*p - '0')
		                 : (unsigned)(tolower((unsigned char)*p) - 'a' + 10);
		x = x << 4 | d;
		p++;
	}
	*v = x;
	*end = p;
	return digits > 0;
}

/* Room for one more entry of a list read from a file (the one growable array, bounded: no
 * file of these has 16 million lines that mean something). 0, or -1 with why. */
static int room_for_one(void *pp, uint32_t *cap, uint32_t count, size_t elem, const char *name,
                        unsigned lineno, char *why, size_t whylen)
{
	if (count >= 1u << 24) {
		snprintf(why, whylen, "%s:%u: more than %u entries", name, lineno, count);
		return -1;
	}
	if (vec_grow_(pp, cap, (uint64_t)count + 1, elem) < 0) {
		snprintf(why, whylen, "%s: out of memory", name);
		return -1;
	}
	return 0;
}

int routing_parse_guids(const char *text, size_t len, const char *name, uint64_t **guids,
                        uint32_t *n, char *why, size_t whylen)
{
	char line[1024];
	size_t pos = 0;
	unsigned lineno = 0;
	uint32_t count = 0, cap = 0;
	uint64_t *g = NULL;
	while (routing_next_line(text, len, &pos, line, sizeof(line))) {
		lineno++;
		char *p = skip_space(line), *end;
		if (!*p || *p == '#')
			continue;
		uint64_t v;
		if (!parse_hex(p, &v, &end) || (*(end = skip_space(end)) && *end != '#') || !v) {
			snprintf(why, whylen,
			         "%s:%u: \"%.40s\" is not a GUID (one per line, hexadecimal)", name,
			         lineno, p);
			free(g);
			return -1;
		}
		if (room_for_one(&g, &cap, count, sizeof(*g), name, lineno, why, whylen) < 0) {
			free(g);
			return -1;
		}
		g[count++] = v;
	}
	*guids = g;
	*n = count;
	return 0;
}

int routing_read_guid_file(const char *path, uint64_t **guids, uint32_t *n, char *why,
                           size_t whylen)
{
	char *text;
	size_t len;
	if (routing_slurp(path, 64u << 20, &text, &len, why, whylen) < 0)
		return -1;
	int rc = routing_parse_guids(text, len, path, guids, n, why, whylen);
	free(text);
	return rc;
}

const struct guid_line_fmt routing_hop_weights_fmt = {.guid_what = "switch GUID",
                                                      .nums = 2,
                                                      .what = {"port 1-254", "weight 1-255"},
                                                      .name = {"port", "weight"},
                                                      .lo = {1, 1},
                                                      .hi = {254, 255},
                                                      .usage = "GUID PORT WEIGHT"};
const struct guid_line_fmt routing_port_prof_ignore_fmt = {.guid_what = "switch GUID",
                                                           .nums = 1,
                                                           .what = {"port 1-254"},
                                                           .name = {"port"},
                                                           .lo = {1},
                                                           .hi = {254},
                                                           .usage = "GUID PORT"};
const struct guid_line_fmt routing_ids_fmt = {.guid_what = "switch GUID",
                                              .nums = 1,
                                              .what = {"number (the switch's ID)"},
                                              .name = {"ID"},
                                              .lo = {0},
                                              .hi = {UINT64_MAX},
                                              .usage = "GUID ID"};

/* A number in lo..hi (decimal or 0x) at p; false when there is none or it is out of range. */
static bool parse_num(char *p, uint64_t lo, uint64_t hi, uint64_t *v, char **end)
{
	if (*p < '0' || *p > '9')
		return false;
	errno = 0;
	unsigned long long x = strtoull(p, end, 0);
	*v = x;
	return !errno && *end != p && x >= lo && x <= hi;
}

/* One line's fields into g: NULL, or what is wrong with it. */
static const char *guid_line(char *p, const struct guid_line_fmt *f, struct guid_line *g, char *msg,
                             size_t msglen)
{
	char *end;
	if (!parse_hex(p, &g->guid, &end) || !g->guid) {
		snprintf(msg, msglen, "is not a %s", f->guid_what);
		return msg;
	}
	for (unsigned k = 0; k < f->nums; k++)
		if (!parse_num(p = skip_space(end), f->lo[k], f->hi[k], &g->v[k], &end)) {
			snprintf(msg, msglen, "has no %s after the %s", f->what[k],
			         k ? f->name[k - 1] : "GUID");
			return msg;
		}
	if (*(end = skip_space(end)) && *end != '#') {
		snprintf(msg, msglen, "has more than the %u fields of a line", f->nums + 1);
		return msg;
	}
	return NULL;
}

int routing_parse_guid_lines(const char *text, size_t len, const char *name,
                             const struct guid_line_fmt *f, struct guid_line **out, uint32_t *n,
                             char *why, size_t whylen)
{
	char line[1024], msg[96];
	size_t pos = 0;
	unsigned lineno = 0;
	uint32_t count = 0, cap = 0;
	struct guid_line *w = NULL;
	while (routing_next_line(text, len, &pos, line, sizeof(line))) {
		lineno++;
		char *p = skip_space(line);
		if (!*p || *p == '#')
			continue;
		struct guid_line g = {.line = lineno};
		const char *bad = guid_line(p, f, &g, msg, sizeof(msg));
		if (bad) {
			snprintf(why, whylen, "%s:%u: \"%.60s\" %s (lines are %s)", name, lineno, p,
			         bad, f->usage);
			free(w);
			return -1;
		}
		if (room_for_one(&w, &cap, count, sizeof(*w), name, lineno, why, whylen) < 0) {
			free(w);
			return -1;
		}
		w[count++] = g;
	}
	*out = w;
	*n = count;
	return 0;
}

int routing_read_guid_lines(const char *path, const struct guid_line_fmt *f, struct guid_line **out,
                            uint32_t *n, char *why, size_t whylen)
{
	char *text;
	size_t len;
	if (routing_slurp(path, 64u << 20, &text, &len, why, whylen) < 0)
		return -1;
	int rc = routing_parse_guid_lines(text, len, path, f, out, n, why, whylen);
	free(text);
	return rc;
}

/* (a function, not strncmp in place: GCC -O3 mistakes the line buffer for an empty string) */
static bool starts_with(const char *s, const char *prefix)
{
	size_t n = strlen(prefix);
	return strlen(s) >= n && memcmp(s, prefix, n) == 0;
}

/* One line of an LFT dump (NUL-terminated, at most a line buffer long); *in_switch carries
 * over from line to line. 0, or -1 with why. */
static int lfts_line(char *line, unsigned lineno, bool *in_switch, const char *name,
                     const struct lfts_parse_cb *cb, void *arg, char *why, size_t whylen)
{
	char *p = skip_space(line), *end;
	if (starts_with(p, "Unicast lids")) {
		char *g = strstr(p, "guid ");
		uint64_t guid;
		if (!g || !parse_hex(skip_space(g + 5), &guid, &end) || !guid) {
			snprintf(why, whylen, "%s:%u: a switch header without \"guid 0x...\"", name,
			         lineno);
			return -1;
		}
		if (cb->sw(arg, guid, lineno) < 0)
			return -1;
		*in_switch = true;
		return 0;
	}
	if (p[0] != '0' || (p[1] != 'x' && p[1] != 'X'))
		return 0; /* column headings, "N lids dumped", blank lines */
	uint64_t lid;
	if (!parse_hex(p, &lid, &end) || (*end != ' ' && *end != '\t')) {
		snprintf(why, whylen, "%s:%u: \"%.40s\" is not \"0x<LID> <port>\"", name, lineno,
		         p);
		return -1;
	}
	if (!*in_switch) {
		snprintf(why, whylen, "%s:%u: an entry before any \"Unicast lids ... guid\" line",
		         name, lineno);
		return -1;
	}
	if (lid == 0 || lid >= 0xc000) {
		snprintf(why, whylen, "%s:%u: LID 0x%llx is not a unicast LID", name, lineno,
		         (unsigned long long)lid);
		return -1;
	}
	p = skip_space(end);
	unsigned long port = 0;
	unsigned digits = 0;
	while (isdigit((unsigned char)*p) && digits < 4) {
		port = port * 10 + (unsigned)(*p++ - '0');
		digits++;
	}
	if (!digits || port > 254 || isdigit((unsigned char)*p)) {
		snprintf(why, whylen, "%s:%u: LID 0x%04llx: the port is not a number 0 to 254",
		         name, lineno, (unsigned long long)lid);
		return -1;
	}
	return cb->entry(arg, (uint16_t)lid, (uint8_t)port, lineno);
}

int routing_parse_lfts(const char *text, size_t len, const char *name,
                       const struct lfts_parse_cb *cb, void *arg, char *why, size_t whylen)
{
	char line[1024];
	size_t pos = 0;
	unsigned lineno = 0;
	bool in_switch = false;
	while (routing_next_line(text, len, &pos, line, sizeof(line)))
		if (lfts_line(line, ++lineno, &in_switch, name, cb, arg, why, whylen) < 0)
			return -1;
	return 0;
}

int routing_read_lfts(const char *path, const struct lfts_parse_cb *cb, void *arg, char *why,
                      size_t whylen)
{
	FILE *f = fopen(path, "r");
	if (!f) {
		snprintf(why, whylen, "%s: %s", path, strerror(errno));
		return -1;
	}
	char line[1024];
	unsigned lineno = 0;
	bool in_switch = false;
	int rc = 0;
	while (!rc && fgets(line, sizeof(line), f)) {
		size_t n = strcspn(line, "\n");
		if (!line[n] && !feof(f)) {
			/* longer than the buffer: the rest of it is not an entry's business */
			int c;
			while ((c = fgetc(f)) != EOF && c != '\n')
				;
		}
		line[n] = 0;
		rc = lfts_line(line, ++lineno, &in_switch, path, cb, arg, why, whylen);
	}
	if (!rc && ferror(f)) {
		snprintf(why, whylen, "%s: %s", path, strerror(errno));
		rc = -1;
	}
	fclose(f);
	return rc;
}
