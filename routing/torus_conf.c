/* torus-2QoS.conf (see torus_conf.h). Hand-written: a line of a keyword and a few numbers,
 * with OpenSM's number syntax (strtoul base 0), for which no library is a better fit. */
#include "routing/torus_conf.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "routing/files.h"

#define SEP " \t\r\n"

struct parse {
	struct torus_conf *c;
	const char *name;
	unsigned line;
	char *save;
	bool shape; /* the torus or mesh line came */
	char *why;
	size_t whylen;
};

static int perr(struct parse *ps, const char *fmt, ...)
{
	char msg[256];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	snprintf(ps->why, ps->whylen, "%s:%u: %s", ps->name, ps->line, msg);
	return -1;
}

/* The next token as an unsigned number (OpenSM's syntax: decimal, 0x hex, 0 octal), with
 * what follows it in *rest. */
static int next_unsigned(struct parse *ps, const char *what, unsigned long long max,
                         unsigned long long *v, const char **rest)
{
	char *tok = strtok_r(NULL, SEP, &ps->save), *end;
	if (!tok)
		return perr(ps, "%s is missing", what);
	errno = 0;
	*v = strtoull(tok, &end, 0);
	if (end == tok || tok[0] == '-' || tok[0] == '+' || errno || *v > max || (!rest && *end))
		return perr(ps, "%s: \"%.40s\" is not a number up to %llu", what, tok, max);
	if (rest)
		*rest = end;
	return 0;
}

/* torus|mesh X Y Z, each radix with an optional t/T (ring) or m/M (line) suffix. */
static int parse_shape(struct parse *ps, bool mesh)
{
	static const char *const axis[] = {"x radix", "y radix", "z radix"};
	if (ps->shape)
		return perr(ps, "a second torus or mesh line (there can be one)");
	ps->shape = true;
	for (unsigned d = 0; d < TORUS_CONF_DIMS; d++) {
		unsigned long long r;
		const char *rest;
		if (next_unsigned(ps, axis[d], TORUS_CONF_MAX_RADIX, &r, &rest) < 0)
			return -1;
		if (!r || (rest[0] && (rest[1] || !strchr("tTmM", rest[0]))))
			return perr(ps, "%s: 1 to %u, with t (torus) or m (mesh) after it", axis[d],
			            TORUS_CONF_MAX_RADIX);
		ps->c->radix[d] = (uint16_t)r;
		ps->c->ring[d] = rest[0] ? (rest[0] == 't' || rest[0] == 'T') : !mesh;
		if (r <= 2)
			ps->c->ring[d] =
			    false; /* a ring of two is two links between two switches */
	}
	return 0;
}

static struct torus_conf_seed *cur_seed(struct parse *ps)
{
	if (!ps->c->nseeds)
		ps->c->nseeds = 1;
	return &ps->c->seed[ps->c->nseeds - 1];
}

/* [xyz][pm]_link FROM TO: all of a seed's links start at one switch. */
static int parse_link(struct parse *ps, const char *kw, unsigned d, bool plus)
{
	unsigned long long from, to;
	if (next_unsigned(ps, "the first switch's GUID", UINT64_MAX, &from, NULL) < 0 ||
	    next_unsigned(ps, "the second switch's GUID", UINT64_MAX, &to, NULL) < 0)
		return -1;
	if (!from || !to || from == to)
		return perr(ps, "%s: two different switches' GUIDs, not 0", kw);
	struct torus_conf_seed *s = cur_seed(ps);
	if (s->from && s->from != from)
		return perr(ps,
		            "%s starts at 0x%016llx, another link of this seed at 0x%016llx: a "
		            "seed's links start at one switch (next_seed starts another seed)",
		            kw, from, (unsigned long long)s->from);
	s->from = from;
	(plus ? s->plus : s->minus)[d] = to;
	return 0;
}

static int parse_dateline(struct parse *ps, const char *kw, unsigned d)
{
	char *tok = strtok_r(NULL, SEP, &ps->save), *end;
	if (!tok)
		return perr(ps, "%s: the position is missing", kw);
	errno = 0;
	long v = strtol(tok, &end, 0);
	long radix = ps->c->radix[d];
	if (end == tok || *end || errno || v <= -radix || v >= radix)
		return perr(ps, "%s: \"%.40s\" is not a position strictly between -%ld and %ld%s",
		            kw, tok, radix, radix,
		            ps->shape ? "" : " (the torus or mesh line comes first)");
	cur_seed(ps)->dateline[d] = (int32_t)v;
	return 0;
}

/* port_order P1 P2 ...: duplicates are ignored, as OpenSM does. */
static int parse_port_order(struct parse *ps)
{
	struct torus_conf *c = ps->c;
	c->nport_order = 0;
	char *tok;
	while ((tok = strtok_r(NULL, SEP, &ps->save)) && tok[0] != '#') {
		char *end;
		errno = 0;
		unsigned long p = strtoul(tok, &end, 0);
		if (end == tok || *end || errno || tok[0] == '-' || !p || p > 254)
			return perr(ps, "port_order: \"%.40s\" is not a port number 1 to 254", tok);
		bool dup = false;
		for (unsigned i = 0; i < c->nport_order; i++)
			dup |= c->port_order[i] == p;
		if (!dup)
			c->port_order[c->nport_order++] = (uint8_t)p;
	}
	return 0;
}

static int parse_keyword(struct parse *ps, const char *kw)
{
	static const char axes[] = "xyz";
	unsigned long long v;
	if (!strcmp(kw, "torus") || !strcmp(kw, "mesh"))
		return parse_shape(ps, kw[0] == 'm');
	if (!strcmp(kw, "next_seed")) {
		if (ps->c->nseeds >= TORUS_CONF_MAX_SEEDS)
			return perr(ps, "more than %u seeds", TORUS_CONF_MAX_SEEDS);
		ps->c->nseeds = ps->c->nseeds ? ps->c->nseeds + 1 : 2;
		return 0;
	}
	if (!strcmp(kw, "portgroup_max_ports")) {
		if (next_unsigned(ps, "portgroup_max_ports", 256, &v, NULL) < 0)
			return -1;
		ps->c->portgroup_max_ports = (unsigned)v;
		return 0;
	}
	if (!strcmp(kw, "max_changes")) {
		if (next_unsigned(ps, "max_changes", UINT32_MAX, &v, NULL) < 0)
			return -1;
		ps->c->max_changes = (unsigned)v;
		return 0;
	}
	if (!strcmp(kw, "port_order"))
		return parse_port_order(ps);
	const char *ax = kw[0] ? strchr(axes, kw[0]) : NULL;
	if (ax && (!strcmp(kw + 1, "p_link") || !strcmp(kw + 1, "m_link")))
		return parse_link(ps, kw, (unsigned)(ax - axes), kw[1] == 'p');
	if (ax && !strcmp(kw + 1, "_dateline"))
		return parse_dateline(ps, kw, (unsigned)(ax - axes));
	return perr(ps, "\"%.40s\" is not a torus-2QoS.conf keyword", kw);
}

int torus_conf_parse(const char *text, size_t len, const char *name, struct torus_conf *c,
                     char *why, size_t whylen)
{
	memset(c, 0, sizeof(*c));
	for (unsigned d = 0; d < TORUS_CONF_DIMS; d++)
		c->radix[d] = 1;
	struct parse ps = {.c = c, .name = name, .why = why, .whylen = whylen};
	char line[1024];
	size_t pos = 0;
	while (routing_next_line(text, len, &pos, line, sizeof(line))) {
		ps.line++;
		ps.save = NULL;
		char *kw = strtok_r(line, SEP, &ps.save);
		if (!kw || kw[0] == '#')
			continue;
		/* a seed before the shape could not check its datelines: OpenSM wants it first */
		if (!ps.shape && strcmp(kw, "torus") && strcmp(kw, "mesh"))
			return perr(
			    &ps, "\"%.40s\" before the torus or mesh line, which comes first", kw);
		if (parse_keyword(&ps, kw) < 0)
			return -1;
	}
	if (!ps.shape) {
		snprintf(why, whylen, "%s: no torus or mesh line (torus X Y Z, or mesh X Y Z)",
		         name);
		return -1;
	}
	/* a seed is a switch named by its links: one without (a next_seed with no link after
	 * it, or datelines alone) would leave the origin and the axes to chance */
	for (unsigned i = 0; i < c->nseeds; i++)
		if (!c->seed[i].from) {
			snprintf(why, whylen,
			         "%s: seed %u has no link (xp_link ... zm_link FROM TO)", name,
			         i + 1);
			return -1;
		}
	return 0;
}

int torus_conf_read(const char *path, struct torus_conf *c, char *why, size_t whylen)
{
	char *text;
	size_t len;
	if (routing_slurp(path, 1u << 20, &text, &len, why, whylen) < 0)
		return -1;
	int rc = torus_conf_parse(text, len, path, c, why, whylen);
	free(text);
	return rc;
}
