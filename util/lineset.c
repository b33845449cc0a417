#include "util/lineset.h"

#include <stdlib.h>
#include <string.h>

uint64_t lineset_hash(const char *line, size_t len)
{
	uint64_t h = 0xcbf29ce484222325ull;
	for (size_t i = 0; i < len; i++)
		h = (h ^ (uint8_t)line[i]) * 0x100000001b3ull;
	/* a final mix (splitmix64's): sums of raw FNV values of similar lines are less even */
	h ^= h >> 30;
	h *= 0xbf58476d1ce4e5b9ull;
	h ^= h >> 27;
	h *= 0x94d049bb133111ebull;
	h ^= h >> 31;
	return h;
}

struct key {
	const char *line;
	size_t len;
};

static bool eq(const void *key, uint32_t idx, const void *ctx)
{
	const struct key *k = key;
	const struct lineset *s = ctx;
	const char *l = s->lines.v[idx];
	return strncmp(l, k->line, k->len) == 0 && l[k->len] == 0;
}

static uint32_t find(const struct lineset *s, const char *line, size_t len, uint64_t h)
{
	struct key k = {line, len};
	return idxmap_find(&s->map, (uint32_t)h, &k, eq, s);
}

bool lineset_has(const struct lineset *s, const char *line, size_t len)
{
	return find(s, line, len, lineset_hash(line, len)) != IDXMAP_NONE;
}

static int insert(struct lineset *s, char *copy, uint64_t h)
{
	if (vec_reserve(&s->lines, (uint64_t)s->lines.n + 1) < 0 ||
	    idxmap_add(&s->map, (uint32_t)h, s->lines.n) < 0) {
		free(copy);
		return -1;
	}
	s->lines.v[s->lines.n++] = copy;
	s->sum += h;
	return 1;
}

int lineset_add(struct lineset *s, const char *line, size_t len)
{
	uint64_t h = lineset_hash(line, len);
	if (find(s, line, len, h) != IDXMAP_NONE)
		return 0;
	char *copy = malloc(len + 1);
	if (!copy)
		return -1;
	memcpy(copy, line, len);
	copy[len] = 0;
	return insert(s, copy, h);
}

int lineset_add_owned(struct lineset *s, char *line)
{
	size_t len = strlen(line);
	uint64_t h = lineset_hash(line, len);
	if (find(s, line, len, h) != IDXMAP_NONE) {
		free(line);
		return 0;
	}
	return insert(s, line, h);
}

bool lineset_del(struct lineset *s, const char *line, size_t len)
{
	uint64_t h = lineset_hash(line, len);
	uint32_t i = find(s, line, len, h);
	if (i == IDXMAP_NONE)
		return false;
	idxmap_del(&s->map, (uint32_t)h, i);
	free(s->lines.v[i]);
	uint32_t last = s->lines.n - 1;
	if (i != last) {
		char *m = s->lines.v[last];
		idxmap_move(&s->map, (uint32_t)lineset_hash(m, strlen(m)), last, i);
		s->lines.v[i] = m;
	}
	s->lines.n--;
	s->sum -= h;
	return true;
}

void lineset_clear(struct lineset *s)
{
	for (uint32_t i = 0; i < s->lines.n; i++)
		free(s->lines.v[i]);
	s->lines.n = 0;
	idxmap_free(&s->map);
	s->sum = 0;
}

void lineset_free(struct lineset *s)
{
	lineset_clear(s);
	vec_free(&s->lines);
}
