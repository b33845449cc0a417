/* ibnetdiscover topology files (see ibnet.h). Hand-written: infiniband-diags has no library
 * call that reads its own output back (libibnetdisc scans a fabric, it does not parse), and
 * the format is a few line shapes. */
#include "util/ibnet.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/textfile.h"
#include "util/vec.h"

#define MAX_FILE (256u << 20) /* a fabric of 50,000 nodes writes about 30 MB */

struct pending_link {
	uint32_t node, line;
	uint64_t peer_id; /* u64map_str_key of the far end's name */
	uint8_t port, peer_port;
};

struct parser {
	struct ibnet *t;
	const char *name;
	char *why;
	size_t whylen;
	unsigned line;
	uint64_t guid; /* the last switchguid=, caguid= or rtguid= */
	uint8_t type;
	uint32_t node; /* the node whose port lines follow, UINT32_MAX before the first */
	struct pending_link *links;
	uint32_t nlinks, links_cap;
};

static int bad(struct parser *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int bad(struct parser *p, const char *fmt, ...)
{
	int n = snprintf(p->why, p->whylen, "%s:%u: ", p->name, p->line);
	va_list ap;
	va_start(ap, fmt);
	if (n >= 0 && (size_t)n < p->whylen)
		vsnprintf(p->why + n, p->whylen - (size_t)n, fmt, ap);
	va_end(ap);
	return -1;
}

/* a quoted string at *s (no escapes in this format): copied into out (cut at len - 1) */
static int quoted(const char **s, char *out, size_t len)
{
	if (**s != '"')
		return -1;
	const char *e = strchr(*s + 1, '"');
	if (!e)
		return -1;
	size_t n = (size_t)(e - (*s + 1));
	if (n >= len)
		n = len - 1;
	memcpy(out, *s + 1, n);
	out[n] = 0;
	*s = e + 1;
	return 0;
}

static const char *skip_space(const char *s)
{
	while (*s == ' ' || *s == '\t')
		s++;
	return s;
}

/* "[N]" and an optional "[ext N]": the port number */
static int port_number(const char **s, uint8_t *port)
{
	char *e;
	if (**s != '[' || !isdigit((unsigned char)(*s)[1]))
		return -1;
	unsigned long v = strtoul(*s + 1, &e, 10);
	if (*e != ']' || v < 1 || v > 254)
		return -1;
	*port = (uint8_t)v;
	*s = e + 1;
	if (!strncmp(*s, "[ext ", 5)) {
		const char *c = strchr(*s, ']');
		if (!c)
			return -1;
		*s = c + 1;
	}
	if (**s == '(') { /* the port's GUID */
		const char *c = strchr(*s, ')');
		if (!c)
			return -1;
		*s = c + 1;
	}
	return 0;
}

static int node_line(struct parser *p, const char *s, uint8_t type)
{
	struct ibnet *t = p->t;
	if (!p->guid || p->type != type)
		return bad(p, "a %s line without the %s= line before it",
		           type == 2   ? "Switch"
		           : type == 1 ? "Ca"
		                       : "Rt",
		           type == 2   ? "switchguid"
		           : type == 1 ? "caguid"
		                       : "rtguid");
	char *e;
	unsigned long nports = strtoul(s, &e, 10);
	if (e == s || nports < 1 || nports > 254)
		return bad(p, "a node's port count is 1-254");
	s = skip_space(e);
	char id[128], desc[65] = "";
	if (quoted(&s, id, sizeof(id)) < 0 || !id[0])
		return bad(p, "a node line names its node in quotes");
	const char *c = strchr(s, '#');
	if (c) {
		c = skip_space(c + 1);
		if (*c == '"' && quoted(&c, desc, sizeof(desc)) < 0)
			return bad(p, "an unterminated description");
	}
	if (u64map_get(&t->by_guid, p->guid) != U64MAP_NONE)
		return bad(p, "node GUID 0x%016" PRIx64 " is listed twice", p->guid);
	uint64_t key = u64map_str_key(id);
	if (u64map_get(&t->by_id, key) != U64MAP_NONE)
		return bad(p, "node \"%s\" is listed twice", id);
	if (array_reserve(&t->nodes, &t->cap, (uint64_t)t->n + 1) < 0 ||
	    u64map_put(&t->by_guid, p->guid, t->n) < 0 || u64map_put(&t->by_id, key, t->n) < 0)
		return bad(p, "out of memory");
	struct ibnet_node *n = &t->nodes[t->n];
	memset(n, 0, sizeof(*n));
	n->guid = p->guid;
	n->type = type;
	n->nports = (uint8_t)nports;
	memcpy(n->desc, desc, sizeof(n->desc));
	p->node = t->n++;
	p->guid = 0;
	return 0;
}

static int port_line(struct parser *p, const char *s)
{
	if (p->node == UINT32_MAX)
		return bad(p, "a port line before any node");
	struct pending_link l = {.node = p->node, .line = p->line};
	char peer[128];
	if (port_number(&s, &l.port) < 0)
		return bad(p, "not a port (\"[N]\", N 1-254)");
	if (l.port > p->t->nodes[p->node].nports)
		return bad(p, "port %u of a node with %u ports", l.port,
		           p->t->nodes[p->node].nports);
	s = skip_space(s);
	if (quoted(&s, peer, sizeof(peer)) < 0 || !peer[0])
		return bad(p, "a port line names the far end's node in quotes");
	if (port_number(&s, &l.peer_port) < 0)
		return bad(p, "not the far end's port (\"[N]\", N 1-254)");
	l.peer_id = u64map_str_key(peer);
	if (array_reserve(&p->links, &p->links_cap, (uint64_t)p->nlinks + 1) < 0)
		return bad(p, "out of memory");
	p->links[p->nlinks++] = l;
	return 0;
}

static int guid_line(struct parser *p, const char *v, uint8_t type)
{
	char *e;
	errno = 0;
	uint64_t g = strtoull(v, &e, 0);
	if (e == v || errno || !g || (*e && *e != '(' && !isspace((unsigned char)*e)))
		return bad(p, "not a GUID: \"%.40s\"", v);
	p->guid = g;
	p->type = type;
	return 0;
}

static int parse_line(struct parser *p, const char *s)
{
	s = skip_space(s);
	if (!*s || *s == '#' || !strncmp(s, "vendid=", 7) || !strncmp(s, "devid=", 6) ||
	    !strncmp(s, "sysimgguid=", 11))
		return 0;
	if (!strncmp(s, "switchguid=", 11))
		return guid_line(p, s + 11, 2);
	if (!strncmp(s, "caguid=", 7))
		return guid_line(p, s + 7, 1);
	if (!strncmp(s, "rtguid=", 7))
		return guid_line(p, s + 7, 3);
	if (!strncmp(s, "Switch", 6) && isspace((unsigned char)s[6]))
		return node_line(p, skip_space(s + 6), 2);
	if (!strncmp(s, "Ca", 2) && isspace((unsigned char)s[2]))
		return node_line(p, skip_space(s + 2), 1);
	if (!strncmp(s, "Rt", 2) && isspace((unsigned char)s[2]))
		return node_line(p, skip_space(s + 2), 3);
	if (*s == '[')
		return port_line(p, s);
	return bad(p, "not a line of an ibnetdiscover topology: \"%.40s\"", s);
}

/* one end of a cable: -1 when the port is cabled elsewhere already */
static int cable_end(struct ibnet *t, uint32_t a, uint8_t pa, uint32_t b, uint8_t pb)
{
	uint64_t key = ((uint64_t)a + 1) << 8 | pa;
	uint32_t want = b << 8 | pb, had = u64map_get(&t->links, key);
	if (had == want)
		return 0;
	if (had != U64MAP_NONE)
		return -1;
	return u64map_put(&t->links, key, want) < 0 ? -2 : 0;
}

static int resolve_links(struct parser *p)
{
	struct ibnet *t = p->t;
	for (uint32_t i = 0; i < p->nlinks; i++) {
		const struct pending_link *l = &p->links[i];
		p->line = l->line;
		uint32_t b = u64map_get(&t->by_id, l->peer_id);
		if (b == U64MAP_NONE)
			return bad(p, "the far end is not a node of the file");
		if (l->peer_port > t->nodes[b].nports)
			return bad(p, "the far end's port %u is beyond its %u ports", l->peer_port,
			           t->nodes[b].nports);
		if (b == l->node && l->peer_port == l->port)
			return bad(p, "a port cabled to itself");
		int r = cable_end(t, l->node, l->port, b, l->peer_port);
		if (!r)
			r = cable_end(t, b, l->peer_port, l->node, l->port);
		if (r == -2)
			return bad(p, "out of memory");
		if (r < 0)
			return bad(p,
			           "this cable's ends are cabled elsewhere too, by another line");
	}
	return 0;
}

int ibnet_parse(struct ibnet *t, const char *text, size_t len, const char *name, char *why,
                size_t whylen)
{
	memset(t, 0, sizeof(*t));
	struct parser p = {.t = t, .name = name, .why = why, .whylen = whylen, .node = UINT32_MAX};
	char line[1024];
	int rc = 0;
	for (size_t pos = 0; pos < len && rc == 0;) {
		const char *nl = memchr(text + pos, '\n', len - pos);
		size_t end = nl ? (size_t)(nl - text) : len, n = end - pos;
		p.line++;
		if (n >= sizeof(line))
			rc = bad(&p, "a line longer than %zu bytes", sizeof(line) - 1);
		else if (memchr(text + pos, 0, n))
			rc = bad(&p, "a NUL byte");
		else {
			memcpy(line, text + pos, n);
			line[n] = 0;
			if (n && line[n - 1] == '\r')
				line[n - 1] = 0;
			rc = parse_line(&p, line);
		}
		pos = end + 1;
	}
	if (rc == 0 && p.guid)
		rc = bad(&p, "a GUID line without its node line");
	if (rc == 0)
		rc = resolve_links(&p);
	free(p.links);
	if (rc < 0)
		ibnet_free(t);
	return rc;
}

int ibnet_read(struct ibnet *t, const char *path, char *why, size_t whylen)
{
	memset(t, 0, sizeof(*t));
	char *text;
	size_t len;
	if (textfile_read(path, MAX_FILE, &text, &len, why, whylen) < 0)
		return -1;
	int rc = ibnet_parse(t, text, len, path, why, whylen);
	free(text);
	return rc;
}

void ibnet_free(struct ibnet *t)
{
	free(t->nodes);
	u64map_free(&t->by_guid);
	u64map_free(&t->by_id);
	u64map_free(&t->links);
	memset(t, 0, sizeof(*t));
}

int ibnet_peer(const struct ibnet *t, uint32_t node, unsigned port, uint64_t *guid,
               uint8_t *port_out)
{
	uint32_t v = u64map_get(&t->links, ((uint64_t)node + 1) << 8 | port);
	if (v == U64MAP_NONE)
		return -1;
	*guid = t->nodes[v >> 8].guid;
	*port_out = (uint8_t)(v & 0xff);
	return 0;
}

/* the lower end of a cable tells it: GUID, then port */
static bool first_end(uint64_t g, uint8_t p, uint64_t og, uint8_t op)
{
	return g < og || (g == og && p < op);
}

static unsigned compare_ports(const struct ibnet *saved, const struct ibnet *live, uint32_t sn,
                              uint32_t ln, void (*fn)(void *, const struct ibnet_change *),
                              void *ctx)
{
	const struct ibnet_node *s = &saved->nodes[sn], *l = &live->nodes[ln];
	unsigned count = 0, top = s->nports > l->nports ? s->nports : l->nports;
	for (unsigned port = 1; port <= top; port++) {
		struct ibnet_change c = {.guid = s->guid, .port = (uint8_t)port};
		bool hs = ibnet_peer(saved, sn, port, &c.want_guid, &c.want_port) == 0;
		bool hl = ibnet_peer(live, ln, port, &c.got_guid, &c.got_port) == 0;
		if (hs && hl && c.want_guid == c.got_guid && c.want_port == c.got_port)
			continue;
		if (!hs && !hl)
			continue;
		/* a far end that is a node missing or new is told as that node */
		if (hs && u64map_get(&live->by_guid, c.want_guid) == U64MAP_NONE)
			hs = false, c.want_guid = 0;
		if (hl && u64map_get(&saved->by_guid, c.got_guid) == U64MAP_NONE)
			hl = false, c.got_guid = 0;
		if (hs && hl)
			c.kind = IBNET_MISWIRED;
		else if (hs)
			c.kind = IBNET_LINK_MISSING;
		else if (hl)
			c.kind = IBNET_LINK_EXTRA;
		else
			continue;
		/* a missing or a new cable once, from its lower end; a port cabled elsewhere
		 * than saved is told at each end */
		uint64_t og = hl ? c.got_guid : c.want_guid;
		uint8_t op = hl ? c.got_port : c.want_port;
		if (c.kind != IBNET_MISWIRED && !first_end(c.guid, c.port, og, op))
			continue;
		count++;
		fn(ctx, &c);
	}
	return count;
}

unsigned ibnet_compare(const struct ibnet *saved, const struct ibnet *live,
                       void (*fn)(void *ctx, const struct ibnet_change *c), void *ctx)
{
	unsigned count = 0;
	for (uint32_t i = 0; i < saved->n; i++) {
		uint32_t ln = u64map_get(&live->by_guid, saved->nodes[i].guid);
		if (ln == U64MAP_NONE) {
			struct ibnet_change c = {.kind = IBNET_NODE_MISSING,
			                         .guid = saved->nodes[i].guid};
			fn(ctx, &c);
			count++;
			continue;
		}
		count += compare_ports(saved, live, i, ln, fn, ctx);
	}
	for (uint32_t i = 0; i < live->n; i++) {
		if (u64map_get(&saved->by_guid, live->nodes[i].guid) != U64MAP_NONE)
			continue;
		struct ibnet_change c = {.kind = IBNET_NODE_EXTRA, .guid = live->nodes[i].guid};
		fn(ctx, &c);
		count++;
	}
	return count;
}
