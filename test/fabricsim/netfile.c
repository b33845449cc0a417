/* ibsim "net" files and ibnetdiscover dumps. Both are line based:
 *
 *   vendid=0x2c9 / devid=0xb924 / sysimgguid=0x... / switchguid=0x...(...) / caguid=0x...
 *   Switch 24 "S-0002c90000000001"   # "desc" enhanced port 0 lid 1 lmc 0
 *   [1]     "H-0002c90000000002"[1](2c90000000003)   # "desc" lid 3 4xQDR
 *   Ca  2 "H-0002c90000000002"      # "desc"
 *   [1](2c90000000003)   "S-0002c90000000001"[1]   # lid 3 lmc 0 "desc" lid 1 4xQDR
 *   [3]     "Switch2"[3]    w=12 s=4     (ibsim's width and speed masks)
 *   [5]     "Switch2"[5]    w=18 s=7 e=15 x=1 train=4xHDR
 *           (e=: extended speeds FDR 1 EDR 2 HDR 4 NDR 8, as ibsim; x=1: XDR; train=: the
 *           cable carries at most this, so the link runs below what its ends support)
 * A link's widths and speeds apply to both ends; listed again from its other end, what that
 * line gives applies to that end alone (mixed-speed links).
 *   [4]     "Switch2"[4]    vl=2         (VLCap of both ends: 1 = VL0 ... 5 = VL0-14)
 *
 * Links may be listed from one end or both; nodes may be referred to before they appear.
 */
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mad/mad_types.h"
#include "topology.h"

struct pending_link {
	uint32_t node;
	unsigned port, rport;
	char rname[64];
	uint8_t width, vl_cap;
	uint16_t speed;
	uint8_t train_width;
	unsigned train_speed;
	unsigned line;
};

struct parser {
	struct fabric *f;
	const char *file;
	unsigned line;
	struct fs_error *err;
	uint32_t cur; /* current node */
	uint64_t next_guid, next_sysguid;
	uint32_t vendid, devid;
	struct pending_link *links;
	size_t nlinks, cap;
};

static int perr(struct parser *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int perr(struct parser *p, const char *fmt, ...)
{
	char msg[400];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	snprintf(p->err->msg, sizeof(p->err->msg), "%s:%u: %s", p->file, p->line, msg);
	return -1;
}

static char *skip_ws(char *s)
{
	while (*s == ' ' || *s == '\t')
		s++;
	return s;
}

/* A quoted string at s: copied to out, returns the char after the closing quote. */
static char *quoted(char *s, char *out, size_t len)
{
	if (*s != '"')
		return NULL;
	char *e = strchr(s + 1, '"');
	if (!e)
		return NULL;
	size_t n = (size_t)(e - s - 1);
	if (n >= len)
		n = len - 1;
	memcpy(out, s + 1, n);
	out[n] = 0;
	return e + 1;
}

/* "[N]" at s. */
static char *bracket_num(char *s, unsigned *out)
{
	if (*s != '[')
		return NULL;
	char *e;
	unsigned long v = strtoul(s + 1, &e, 10);
	if (e == s + 1 || *e != ']' || v > 254)
		return NULL;
	*out = (unsigned)v;
	return e + 1;
}

/* Optional "(hexguid)" at s. */
static char *paren_guid(char *s, uint64_t *out)
{
	*out = 0;
	if (*s != '(')
		return s;
	char *e;
	*out = strtoull(s + 1, &e, 16);
	if (*e != ')')
		return NULL;
	return e + 1;
}

/* width and speed from ibnetdiscover's "4xQDR" (or "2xNDR") in a comment: what the ports
 * support, everything up to that */
static void comment_rate(const char *c, uint8_t *width, uint16_t *speed)
{
	for (const char *x = strchr(c, 'x'); x; x = strchr(x + 1, 'x')) {
		if (x == c || !isdigit((unsigned char)x[-1]))
			continue;
		unsigned w = (unsigned)(x[-1] - '0');
		if (x - c >= 2 && isdigit((unsigned char)x[-2]))
			w += 10u * (unsigned)(x[-2] - '0');
		char name[4] = {0};
		for (unsigned i = 0; i < 3 && x[1 + i]; i++) /* the comment may end after the x */
			name[i] = x[1 + i];
		int sp = mad_link_speed_parse(name);
		if (sp < 0 || !mad_link_width_of_lanes(w))
			continue;
		*width = fabric_port_widths(mad_link_width_of_lanes(w), (unsigned)sp);
		*speed = (uint16_t)((2u << sp) - 1);
		return;
	}
}

static uint64_t value_guid(const char *v)
{
	return strtoull(v, NULL, 0);
}

static int parse_header(struct parser *p, char *s)
{
	uint8_t type;
	if (strncmp(s, "Switch", 6) == 0) {
		type = NODE_TYPE_SWITCH;
		s += 6;
	} else if (strncmp(s, "Hca", 3) == 0) {
		type = NODE_TYPE_CA;
		s += 3;
	} else if (strncmp(s, "Ca", 2) == 0) {
		type = NODE_TYPE_CA;
		s += 2;
	} else if (strncmp(s, "Rt", 2) == 0) {
		type = NODE_TYPE_ROUTER;
		s += 2;
	} else {
		return perr(p, "expected Switch, Hca, Ca or Rt at \"%.20s\"", s);
	}
	char *e;
	unsigned long nports = strtoul(skip_ws(s), &e, 10);
	if (e == skip_ws(s) || nports == 0 || nports > 254)
		return perr(p, "bad port count (1-254)");
	char name[64];
	s = quoted(skip_ws(e), name, sizeof(name));
	if (!s || !name[0])
		return perr(p, "expected the node's id in double quotes");
	if (u64map_get(&p->f->by_name, u64map_str_key(name)) != FS_NONE)
		return perr(p, "node \"%s\" defined twice", name);
	uint64_t guid = p->next_guid;
	if (guid && u64map_get(&p->f->by_node_guid, guid) != FS_NONE)
		return perr(p, "GUID 0x%016llx used twice", (unsigned long long)guid);
	p->cur = fabric_add_node(p->f, type, (unsigned)nports, name, guid);
	struct fs_node *n = &p->f->nodes[p->cur];
	n->vendor_id = p->vendid;
	n->device_id = p->devid;
	if (p->next_sysguid)
		n->sys_guid = p->next_sysguid;
	/* the description: the first quoted string of the comment; "enhanced port 0" there
	 * (as ibnetdiscover writes it) gives the switch one */
	char *c = strchr(s, '#');
	if (c) {
		char *q = strchr(c, '"');
		char desc[65];
		char *after = q ? quoted(q, desc, sizeof(desc)) : NULL;
		if (after)
			snprintf(n->desc, sizeof(n->desc), "%s", desc);
		if (type == NODE_TYPE_SWITCH && strstr(after ? after : c, "enhanced port 0"))
			p->f->sws[n->sw].si.enhanced_port0 = 1;
	}
	p->next_guid = p->next_sysguid = 0;
	p->vendid = p->devid = 0;
	return 0;
}

static int parse_port(struct parser *p, char *s)
{
	if (p->cur == FS_NONE)
		return perr(p, "port line before any Switch/Ca line");
	struct fs_node *n = &p->f->nodes[p->cur];
	unsigned port, rport;
	uint64_t pguid, rguid;
	s = bracket_num(s, &port);
	if (!s)
		return perr(p, "expected [port]");
	if ((n->type == NODE_TYPE_SWITCH && port == 0) || port == 0 || port > n->nports)
		return perr(p, "port %u does not exist on \"%s\" (%u ports)", port, n->name,
		            n->nports);
	s = paren_guid(s, &pguid);
	if (!s)
		return perr(p, "bad (port GUID)");
	/* ibnetdiscover's "[1][ext 1]" style extras are skipped */
	while (*s == '[') {
		char *e = strchr(s, ']');
		if (!e)
			return perr(p, "unclosed [");
		s = e + 1;
	}
	char rname[64];
	s = quoted(skip_ws(s), rname, sizeof(rname));
	if (!s)
		return perr(p, "expected the remote node's id in double quotes");
	s = bracket_num(s, &rport);
	if (!s)
		return perr(p, "expected [remote port] after \"%s\"", rname);
	s = paren_guid(s, &rguid);
	if (!s)
		return perr(p, "bad (remote port GUID)");
	uint8_t width = 0, vl_cap = 0, train_width = 0;
	uint16_t speed = 0;
	unsigned train_speed = LINK_SPEEDS;
	unsigned long sv = 0, ev = 0, xv = 0;
	bool has_s = false, has_e = false;
	char *c = strchr(s, '#');
	if (c) {
		comment_rate(c, &width, &speed);
		*c = 0;
	}
	for (char *tok = strtok(s, " \t\r\n"); tok; tok = strtok(NULL, " \t\r\n")) {
		unsigned long v;
		char *e;
		if (!strncmp(tok, "vl=", 3)) {
			v = strtoul(tok + 3, &e, 0);
			if (*e || v < 1 || v > 5)
				return perr(p, "bad vl= value \"%s\" (VLCap 1-5)", tok + 3);
			vl_cap = (uint8_t)v;
			continue;
		}
		if (!strncmp(tok, "train=", 6)) {
			if (fabric_parse_rate(tok + 6, &train_width, &train_speed) < 0)
				return perr(p, "bad train= value \"%s\" (e.g. 4xHDR, 2xNDR, EDR)",
				            tok + 6);
			continue;
		}
		if ((tok[0] == 'w' || tok[0] == 's' || tok[0] == 'e' || tok[0] == 'x') &&
		    tok[1] == '=') {
			v = strtoul(tok + 2, &e, 0);
			if (*e || (tok[0] == 'w' && (v < 1 || v > 31)) ||
			    (tok[0] == 's' && v > 7) || (tok[0] == 'e' && v > 15) ||
			    (tok[0] == 'x' && v > 1))
				return perr(p, "bad %c= value \"%s\"", tok[0], tok + 2);
			if (tok[0] == 'w')
				width = (uint8_t)v;
			else if (tok[0] == 's')
				sv = v ? v : 4, has_s = true; /* ibsim: 0 is QDR */
			else if (tok[0] == 'e')
				ev = v, has_e = true;
			else
				xv = v, has_e = true;
			continue;
		}
		return perr(p, "unexpected \"%s\" after the link", tok);
	}
	if (has_s || has_e)
		speed = (uint16_t)((has_s ? sv : 7u) | (ev << LINK_FDR) | (xv << LINK_XDR));
	if (pguid && n->type != NODE_TYPE_SWITCH) {
		uint32_t pi = fabric_port(p->f, p->cur, port);
		p->f->ports[pi].guid = pguid;
		u64map_put(&p->f->by_port_guid, pguid, pi);
	}
	if (p->nlinks == p->cap) {
		p->cap = p->cap ? p->cap * 2 : 256;
		p->links = realloc(p->links, p->cap * sizeof(*p->links));
		if (!p->links)
			return perr(p, "out of memory");
	}
	struct pending_link *l = &p->links[p->nlinks++];
	l->node = p->cur;
	l->port = port;
	l->rport = rport;
	snprintf(l->rname, sizeof(l->rname), "%s", rname);
	l->width = width;
	l->speed = speed;
	l->train_width = train_width;
	l->train_speed = train_speed;
	l->vl_cap = vl_cap;
	l->line = p->line;
	return 0;
}

static int parse_line(struct parser *p, char *s)
{
	s = skip_ws(s);
	size_t n = strlen(s);
	while (n && (s[n - 1] == '\n' || s[n - 1] == '\r' || s[n - 1] == ' ' || s[n - 1] == '\t'))
		s[--n] = 0;
	if (!*s || *s == '#')
		return 0;
	if (*s == '[')
		return parse_port(p, s);
	char *eq = strchr(s, '=');
	if (eq && !strchr(s, '"')) {
		*eq = 0;
		const char *key = s, *val = eq + 1;
		if (!strcmp(key, "vendid"))
			p->vendid = (uint32_t)strtoul(val, NULL, 0);
		else if (!strcmp(key, "devid"))
			p->devid = (uint32_t)strtoul(val, NULL, 0);
		else if (!strcmp(key, "sysimgguid"))
			p->next_sysguid = value_guid(val);
		else if (!strcmp(key, "switchguid") || !strcmp(key, "caguid") ||
		         !strcmp(key, "hcaguids") || !strcmp(key, "rtguid"))
			p->next_guid = value_guid(val);
		else
			return perr(p, "unknown setting \"%s\"", key);
		return 0;
	}
	p->cur = FS_NONE;
	return parse_header(p, s);
}

static int resolve_links(struct parser *p)
{
	struct fabric *f = p->f;
	for (size_t i = 0; i < p->nlinks; i++) {
		struct pending_link *l = &p->links[i];
		p->line = l->line;
		uint32_t rn = u64map_get(&f->by_name, u64map_str_key(l->rname));
		if (rn == FS_NONE)
			return perr(p, "link to unknown node \"%s\"", l->rname);
		uint32_t a = fabric_port(f, l->node, l->port);
		uint32_t b = fabric_port(f, rn, l->rport);
		if (b == FS_NONE || (fs_is_switch(f, rn) && l->rport == 0))
			return perr(p, "link to port %u of \"%s\", which has %u ports", l->rport,
			            l->rname, f->nodes[rn].nports);
		if (f->ports[a].peer == b && f->ports[b].peer == a) {
			/* listed from both ends: this line speaks for its own end */
			if (l->width)
				f->ports[a].width_cap = l->width;
			if (l->speed)
				f->ports[a].speed_cap = l->speed;
			continue;
		}
		if (f->ports[a].peer != FS_NONE || f->ports[b].peer != FS_NONE) {
			uint32_t busy = f->ports[a].peer != FS_NONE ? a : b;
			uint32_t other = f->ports[busy].peer;
			return perr(p, "port %u of \"%s\" is already cabled to port %u of \"%s\"",
			            f->ports[busy].num, fs_node_of(f, busy)->name,
			            f->ports[other].num, fs_node_of(f, other)->name);
		}
		fabric_connect(f, a, b, l->width, l->speed);
		if (l->train_width || l->train_speed < LINK_SPEEDS)
			fabric_cable_limit(f, a, l->train_width, l->train_speed);
		if (l->vl_cap)
			f->ports[a].pi.vl_cap = f->ports[b].pi.vl_cap = l->vl_cap;
	}
	return 0;
}

int netfile_parse(struct fabric *f, const char *name, const char *text, struct fs_error *err)
{
	struct parser p = {.f = f, .file = name, .err = err, .cur = FS_NONE};
	char *copy = strdup(text);
	if (!copy)
		return -1;
	int rc = 0;
	char *line = copy;
	/* strtok_r would skip empty lines and lose the line count */
	while (line && rc == 0) {
		char *nl = strchr(line, '\n');
		if (nl)
			*nl = 0;
		p.line++;
		rc = parse_line(&p, line);
		line = nl ? nl + 1 : NULL;
	}
	if (rc == 0)
		rc = resolve_links(&p);
	if (rc == 0 && f->nnodes == 0) {
		snprintf(err->msg, sizeof(err->msg), "%s: no nodes", name);
		rc = -1;
	}
	if (rc == 0)
		fabric_finalize(f);
	free(p.links);
	free(copy);
	return rc;
}

int netfile_load(struct fabric *f, const char *path, struct fs_error *err)
{
	FILE *fp = fopen(path, "r");
	if (!fp) {
		snprintf(err->msg, sizeof(err->msg), "%s: %s", path, strerror(errno));
		return -1;
	}
	fseek(fp, 0, SEEK_END);
	long sz = ftell(fp);
	fseek(fp, 0, SEEK_SET);
	char *buf = malloc((size_t)sz + 1);
	if (!buf || fread(buf, 1, (size_t)sz, fp) != (size_t)sz) {
		fclose(fp);
		free(buf);
		snprintf(err->msg, sizeof(err->msg), "%s: cannot read", path);
		return -1;
	}
	buf[sz] = 0;
	fclose(fp);
	int rc = netfile_parse(f, path, buf, err);
	free(buf);
	return rc;
}

int netfile_write(const struct fabric *f, const char *path, struct fs_error *err)
{
	FILE *fp = fopen(path, "w");
	if (!fp) {
		snprintf(err->msg, sizeof(err->msg), "%s: %s", path, strerror(errno));
		return -1;
	}
	for (uint32_t i = 0; i < f->nnodes; i++) {
		const struct fs_node *n = &f->nodes[i];
		bool sw = n->type == NODE_TYPE_SWITCH;
		fprintf(fp, "%s=0x%016llx\n", sw ? "switchguid" : "caguid",
		        (unsigned long long)n->guid);
		fprintf(fp, "%s\t%u \"%s\"\t\t# \"%s\"%s\n", sw ? "Switch" : "Ca", n->nports,
		        n->name, n->desc,
		        sw && f->sws[n->sw].si.enhanced_port0 ? " enhanced port 0" : "");
		for (unsigned num = 1; num <= n->nports; num++) {
			uint32_t p = fabric_port(f, i, num);
			const struct fs_port *port = &f->ports[p];
			if (port->peer == FS_NONE)
				continue;
			const struct fs_port *peer = &f->ports[port->peer];
			fprintf(fp, "[%u]", num);
			if (!sw)
				fprintf(fp, "(%llx)", (unsigned long long)port->guid);
			fprintf(fp, "\t\"%s\"[%u]\tw=%u s=%u", f->nodes[peer->node].name, peer->num,
			        port->width_cap, port->speed_cap & 7u);
			if (port->speed_cap >> LINK_FDR)
				fprintf(fp, " e=%u", (port->speed_cap >> LINK_FDR) & 0xfu);
			if (port->speed_cap >> LINK_XDR)
				fprintf(fp, " x=1");
			if (port->cable_width || port->cable_speed) {
				fputs(" train=", fp);
				if (port->cable_width)
					fprintf(fp, "%ux", mad_link_lanes(port->cable_width));
				if (port->cable_speed)
					fputs(mad_link_speed_name(
					          (enum link_speed)(port->cable_speed - 1)),
					      fp);
			}
			if (port->pi.vl_cap != 4)
				fprintf(fp, " vl=%u", port->pi.vl_cap);
			fputc('\n', fp);
		}
		fputc('\n', fp);
	}
	if (fclose(fp) != 0) {
		snprintf(err->msg, sizeof(err->msg), "%s: %s", path, strerror(errno));
		return -1;
	}
	return 0;
}
