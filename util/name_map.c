/* node-name-map files (see name_map.h). Hand-written: a line of a number and a quoted name,
 * for which no library is a better fit than a loop over lines. */
#include "util/name_map.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/textfile.h"

#define MAX_FILE (64u << 20) /* a map of a million nodes is 60 MB */

static int add(struct name_map *m, uint64_t guid, const char *name, size_t n)
{
	if (u64map_get(&m->by_guid, guid) != U64MAP_NONE)
		return 0; /* the first line of a GUID wins, as infiniband-diags reads it */
	if (m->n == m->cap) {
		uint32_t cap = m->cap ? m->cap * 2 : 256;
		void *nn = realloc(m->names, sizeof(*m->names) * cap);
		if (!nn)
			return -1;
		m->names = nn;
		m->cap = cap;
	}
	if (u64map_put(&m->by_guid, guid, m->n) < 0)
		return -1;
	memcpy(m->names[m->n], name, n);
	m->names[m->n][n] = 0;
	m->n++;
	return 0;
}

/* One line (NUL-terminated, no newline): 1 a name added, 0 nothing on it, -1 malformed
 * (why), -2 out of memory. */
static int parse_line(struct name_map *m, char *l, char *why, size_t whylen)
{
	while (isspace((unsigned char)*l))
		l++;
	if (!*l || *l == '#')
		return 0;
	char *e;
	errno = 0;
	unsigned long long g = strtoull(l, &e, 0);
	if (e == l || errno || !g || *l == '-' || *l == '+' ||
	    (*e && *e != '#' && !isspace((unsigned char)*e))) {
		snprintf(why, whylen, "\"%.40s\" does not start with a node GUID", l);
		return -1;
	}
	while (isspace((unsigned char)*e))
		e++;
	const char *name = e;
	size_t n;
	if (*e == '"') {
		name = e + 1;
		const char *q = strchr(name, '"');
		if (!q) {
			snprintf(why, whylen, "the name has no closing quote");
			return -1;
		}
		n = (size_t)(q - name);
	} else {
		n = strcspn(e, "#");
		while (n && isspace((unsigned char)e[n - 1]))
			n--;
	}
	if (!n || n >= NAME_MAP_NAME_LEN || memchr(name, '#', n)) {
		snprintf(why, whylen, "GUID 0x%016llx: %s", g,
		         !n                       ? "no name"
		         : n >= NAME_MAP_NAME_LEN ? "a name longer than 64 bytes"
		                                  : "a name with '#'");
		return -1;
	}
	return add(m, g, name, n) < 0 ? -2 : 1;
}

int name_map_parse(struct name_map *m, const char *text, size_t len, const char *name, char *why,
                   size_t whylen)
{
	memset(m, 0, sizeof(*m));
	char line[1024], msg[160];
	unsigned ln = 0;
	for (size_t pos = 0; pos < len;) {
		size_t s = pos, e = s;
		while (e < len && text[e] != '\n')
			e++;
		pos = e < len ? e + 1 : e;
		ln++;
		if (e - s >= sizeof(line)) {
			snprintf(why, whylen, "%s:%u: a line longer than %zu bytes", name, ln,
			         sizeof(line) - 1);
			name_map_free(m);
			return -1;
		}
		memcpy(line, text + s, e - s);
		line[e - s] = 0;
		if (memchr(line, 0, e - s)) {
			snprintf(why, whylen, "%s:%u: a NUL byte", name, ln);
			name_map_free(m);
			return -1;
		}
		int rc = parse_line(m, line, msg, sizeof(msg));
		if (rc < 0) {
			snprintf(why, whylen, "%s:%u: %s", name, ln,
			         rc == -2 ? "out of memory" : msg);
			name_map_free(m);
			return -1;
		}
	}
	return 0;
}

int name_map_read(struct name_map *m, const char *path, char *why, size_t whylen)
{
	memset(m, 0, sizeof(*m));
	char *text;
	size_t len;
	if (textfile_read(path, MAX_FILE, &text, &len, why, whylen) < 0)
		return -1;
	int rc = name_map_parse(m, text, len, path, why, whylen);
	free(text);
	return rc;
}

const char *name_map_get(const struct name_map *m, uint64_t guid)
{
	uint32_t i = m ? u64map_get(&m->by_guid, guid) : U64MAP_NONE;
	return i == U64MAP_NONE ? NULL : m->names[i];
}

void name_map_free(struct name_map *m)
{
	u64map_free(&m->by_guid);
	free(m->names);
	memset(m, 0, sizeof(*m));
}
