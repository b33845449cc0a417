/* Fabric generators. Names and GUIDs follow creation order, so a spec always gives the same
 * fabric; "seed" drives the random choices (missing links, random graphs). */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "mad/mad_types.h"
#include "topology.h"

/* Bounds on a spec's numbers: "hosts=-2" read as 4 billion hosts once */
#define GEN_MAX_VALUE 1000000u
#define GEN_MAX_DIM   1024u
/* Nodes a generator makes at most: four times the unicast LID space (49,151), past which no
 * subnet comes up. Without it a spec of a few bytes (torus:dims=61x33x8,hosts=62) asked for
 * a million nodes and 2.3 GB before anything could fail. Ports too: 16,000 switches of 254
 * ports are few nodes and a gigabyte (a 40,000-host tree has 320,000 ports). */
#define GEN_MAX_NODES 200000u
#define GEN_MAX_PORTS 1000000u

struct spec {
	char kind[16];
	unsigned radix, levels, hosts, hca_ports, missing_switches, missing_links, seed;
	unsigned dims[3], ndims;
	unsigned groups, routers, global, switches, links;
	/* port capabilities: switch ports, then host ports (0 / LINK_SPEEDS: the default) */
	uint8_t width, host_width;
	unsigned speed, host_speed, slow_links;
	unsigned esp0;   /* switches have an enhanced port 0 (VLs, SL-to-VL, VL arbitration) */
	unsigned vports; /* CA ports have SR-IOV virtualization with this VPortCap (0: none) */
};

static int gerr(struct fs_error *err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int gerr(struct fs_error *err, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
	va_end(ap);
	return -1;
}

static int parse_spec(const char *text, struct spec *sp, struct fs_error *err)
{
	memset(sp, 0, sizeof(*sp));
	sp->hca_ports = 1;
	sp->seed = 1;
	sp->speed = sp->host_speed = LINK_SPEEDS;
	const char *colon = strchr(text, ':');
	size_t klen = colon ? (size_t)(colon - text) : strlen(text);
	if (klen == 0 || klen >= sizeof(sp->kind))
		return gerr(err, "generator spec \"%s\": expected KIND:key=value,...", text);
	memcpy(sp->kind, text, klen);
	if (!colon)
		return 0;
	char buf[256];
	snprintf(buf, sizeof(buf), "%s", colon + 1);
	for (char *kv = strtok(buf, ","); kv; kv = strtok(NULL, ",")) {
		char *eq = strchr(kv, '=');
		if (!eq)
			return gerr(err, "generator spec: \"%s\" is not key=value", kv);
		*eq = 0;
		const char *k = kv, *v = eq + 1;
		char *e;
		if (!strcmp(k, "dims")) {
			sp->ndims = 0;
			for (const char *d = v; *d && sp->ndims < 3;) {
				unsigned long x = strtoul(d, &e, 10);
				if (!isdigit((unsigned char)*d) || x > GEN_MAX_DIM)
					return gerr(err,
					            "generator spec: dims=\"%s\": each 1 to %u, as "
					            "AxB or AxBxC",
					            v, GEN_MAX_DIM);
				sp->dims[sp->ndims++] = (unsigned)x;
				d = (*e == 'x') ? e + 1 : e;
				if (e == d && *e)
					break;
			}
			continue;
		}
		if (!strcmp(k, "speed") || !strcmp(k, "host-speed")) {
			int spd = mad_link_speed_parse(v);
			if (spd < 0)
				return gerr(err,
				            "generator spec: %s=\"%s\" is not SDR, DDR, QDR, FDR, "
				            "EDR, HDR, NDR or XDR",
				            k, v);
			*(k[0] == 's' ? &sp->speed : &sp->host_speed) = (unsigned)spd;
			continue;
		}
		if (!strcmp(k, "width") || !strcmp(k, "host-width")) {
			uint8_t w = 0;
			unsigned dummy;
			if (fabric_parse_rate(v, &w, &dummy) < 0 || !w)
				return gerr(
				    err, "generator spec: %s=\"%s\" is not 1x, 2x, 4x, 8x or 12x",
				    k, v);
			*(k[0] == 'w' ? &sp->width : &sp->host_width) = w;
			continue;
		}
		unsigned long n = strtoul(v, &e, 10);
		if (*e || e == v || !isdigit((unsigned char)*v))
			return gerr(err, "generator spec: %s=\"%s\" is not a number", k, v);
		if (n > GEN_MAX_VALUE)
			return gerr(err, "generator spec: %s=%s is more than any fabric has (%u)",
			            k, v, GEN_MAX_VALUE);
		unsigned u = (unsigned)n;
		if (!strcmp(k, "radix"))
			sp->radix = u;
		else if (!strcmp(k, "levels"))
			sp->levels = u;
		else if (!strcmp(k, "hosts"))
			sp->hosts = u;
		else if (!strcmp(k, "hca-ports"))
			sp->hca_ports = u;
		else if (!strcmp(k, "missing-switches"))
			sp->missing_switches = u;
		else if (!strcmp(k, "missing-links"))
			sp->missing_links = u;
		else if (!strcmp(k, "seed"))
			sp->seed = u;
		else if (!strcmp(k, "groups"))
			sp->groups = u;
		else if (!strcmp(k, "routers"))
			sp->routers = u;
		else if (!strcmp(k, "global"))
			sp->global = u;
		else if (!strcmp(k, "switches"))
			sp->switches = u;
		else if (!strcmp(k, "links"))
			sp->links = u;
		else if (!strcmp(k, "slow-links"))
			sp->slow_links = u;
		else if (!strcmp(k, "esp0"))
			sp->esp0 = u;
		else if (!strcmp(k, "vports"))
			sp->vports = u;
		else
			return gerr(err, "generator spec: unknown key \"%s\"", k);
	}
	return 0;
}

/* sws switches of ports ports each (port 0 not counted) and hosts CAs of hca_ports */
static int too_big(struct fs_error *err, const char *kind, uint64_t sws, uint64_t ports,
                   uint64_t hosts, unsigned hca_ports)
{
	uint64_t nodes = sws + hosts, nports = sws * (ports + 1) + hosts * (hca_ports + 1ull);
	if (nodes > GEN_MAX_NODES)
		return gerr(err, "%s: %" PRIu64 " nodes, more than %u (a subnet addresses 49,151)",
		            kind, nodes, GEN_MAX_NODES);
	if (nports > GEN_MAX_PORTS)
		return gerr(err, "%s: %" PRIu64 " ports, more than %u", kind, nports,
		            GEN_MAX_PORTS);
	return 0;
}

static uint32_t add(struct fabric *f, uint8_t type, unsigned nports, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static uint32_t add(struct fabric *f, uint8_t type, unsigned nports, const char *fmt, ...)
{
	char name[64];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(name, sizeof(name), fmt, ap);
	va_end(ap);
	return fabric_add_node(f, type, nports, name, 0);
}

static void link_nodes(struct fabric *f, uint32_t a, unsigned pa, uint32_t b, unsigned pb)
{
	fabric_connect(f, fabric_port(f, a, pa), fabric_port(f, b, pb), 0, 0);
}

/* Hosts hang below a switch's first `down` ports, one HCA port each (two-port HCAs get their
 * second port on the next switch, for dual-rail style fabrics). */
static void add_hosts(struct fabric *f, const struct spec *sp, uint32_t *sws, unsigned nsw,
                      unsigned down, unsigned total)
{
	unsigned h = 0;
	for (unsigned s = 0; s < nsw && h < total; s++) {
		for (unsigned p = 1; p <= down && h < total; p++, h++) {
			uint32_t host = add(f, NODE_TYPE_CA, sp->hca_ports, "host-%u", h + 1);
			snprintf(f->nodes[host].desc, sizeof(f->nodes[host].desc), "host-%u HCA-1",
			         h + 1);
			link_nodes(f, host, 1, sws[s], p);
			if (sp->hca_ports == 2 && nsw > 1)
				link_nodes(f, host, 2, sws[(s + 1) % nsw], down + p);
		}
	}
}

static int gen_fattree(struct fabric *f, const struct spec *sp, struct fs_error *err)
{
	unsigned k = sp->radix, half = k / 2;
	if (k < 4 || k % 2 || k > 254)
		return gerr(err, "fattree: radix must be even, 4 to 254");
	unsigned levels = sp->levels ? sp->levels : 2;
	/* two-port HCAs take a second down port on a neighbouring leaf */
	unsigned down = sp->hca_ports == 2 ? half / 2 : half;
	if (levels == 2) {
		unsigned max_hosts = k * down;
		unsigned hosts = sp->hosts ? sp->hosts : max_hosts;
		if (hosts > max_hosts)
			return gerr(err, "fattree: 2 levels of radix %u hold at most %u hosts", k,
			            max_hosts);
		unsigned leaves = (hosts + down - 1) / down;
		if (too_big(err, "fattree", (uint64_t)leaves + half, k, hosts, sp->hca_ports) < 0)
			return -1;
		uint32_t *leaf = calloc(leaves, sizeof(uint32_t));
		uint32_t *spine = calloc(half, sizeof(uint32_t));
		for (unsigned s = 0; s < half; s++)
			spine[s] = add(f, NODE_TYPE_SWITCH, k, "spine-%u", s + 1);
		for (unsigned l = 0; l < leaves; l++)
			leaf[l] = add(f, NODE_TYPE_SWITCH, k, "leaf-%u", l + 1);
		for (unsigned l = 0; l < leaves; l++)
			for (unsigned s = 0; s < half; s++)
				link_nodes(f, leaf[l], half + 1 + s, spine[s], l + 1);
		add_hosts(f, sp, leaf, leaves, down, hosts);
		free(leaf);
		free(spine);
		return 0;
	}
	if (levels != 3)
		return gerr(err, "fattree: levels must be 2 or 3");
	/* k pods of half leaves and half aggregation switches; (half)^2 core switches */
	unsigned per_pod = half * down;
	unsigned max_hosts = k * per_pod;
	unsigned hosts = sp->hosts ? sp->hosts : max_hosts;
	if (hosts > max_hosts)
		return gerr(err, "fattree: 3 levels of radix %u hold at most %u hosts", k,
		            max_hosts);
	unsigned pods = (hosts + per_pod - 1) / per_pod;
	if (too_big(err, "fattree", (uint64_t)half * half + (uint64_t)pods * k, k, hosts,
	            sp->hca_ports) < 0)
		return -1;
	uint32_t *core = calloc(half * half, sizeof(uint32_t));
	uint32_t *leaf = calloc(pods * half, sizeof(uint32_t));
	for (unsigned c = 0; c < half * half; c++)
		core[c] = add(f, NODE_TYPE_SWITCH, k, "core-%u", c + 1);
	for (unsigned p = 0; p < pods; p++) {
		uint32_t agg[128];
		for (unsigned a = 0; a < half; a++)
			agg[a] = add(f, NODE_TYPE_SWITCH, k, "agg-%u-%u", p + 1, a + 1);
		for (unsigned l = 0; l < half; l++) {
			leaf[p * half + l] =
			    add(f, NODE_TYPE_SWITCH, k, "leaf-%u-%u", p + 1, l + 1);
			for (unsigned a = 0; a < half; a++)
				link_nodes(f, leaf[p * half + l], half + 1 + a, agg[a], l + 1);
		}
		/* aggregation switch a of every pod reaches core switches a*half .. a*half+half-1
		 */
		for (unsigned a = 0; a < half; a++)
			for (unsigned c = 0; c < half; c++)
				link_nodes(f, agg[a], half + 1 + c, core[a * half + c], p + 1);
	}
	add_hosts(f, sp, leaf, pods * half, down, hosts);
	free(core);
	free(leaf);
	return 0;
}

/* Switches on a 2D/3D grid, each with `hosts` hosts; tori wrap around. Ports: hosts first,
 * then -x +x -y +y -z +z. */
static int gen_grid(struct fabric *f, const struct spec *sp, bool torus, struct fs_error *err)
{
	if (sp->ndims < 2 || sp->ndims > 3)
		return gerr(err, "%s: dims=AxB or AxBxC", sp->kind);
	unsigned d[3] = {sp->dims[0], sp->dims[1], sp->ndims == 3 ? sp->dims[2] : 1};
	for (unsigned i = 0; i < sp->ndims; i++)
		if (d[i] < 2 || d[i] > 64)
			return gerr(err, "%s: each dimension 2 to 64", sp->kind);
	unsigned hosts = sp->hosts ? sp->hosts : 1;
	unsigned nports = hosts + 2 * sp->ndims;
	if (nports > 254)
		return gerr(err, "%s: too many ports per switch", sp->kind);
	unsigned n = d[0] * d[1] * d[2];
	if (too_big(err, sp->kind, n, nports, (uint64_t)n * hosts, sp->hca_ports) < 0)
		return -1;
	uint32_t *sw = calloc(n, sizeof(uint32_t));
	for (unsigned z = 0; z < d[2]; z++)
		for (unsigned y = 0; y < d[1]; y++)
			for (unsigned x = 0; x < d[0]; x++)
				sw[(z * d[1] + y) * d[0] + x] =
				    add(f, NODE_TYPE_SWITCH, nports, "sw-%u-%u-%u", x, y, z);
	for (unsigned i = 0; i < n; i++) {
		unsigned c[3] = {i % d[0], (i / d[0]) % d[1], i / (d[0] * d[1])};
		for (unsigned dim = 0; dim < sp->ndims; dim++) {
			if (!torus && c[dim] + 1 == d[dim])
				continue;
			if (d[dim] == 2 && torus && c[dim] == 1)
				continue; /* a ring of two is one link, not two */
			unsigned nc[3] = {c[0], c[1], c[2]};
			nc[dim] = (c[dim] + 1) % d[dim];
			unsigned j = (nc[2] * d[1] + nc[1]) * d[0] + nc[0];
			link_nodes(f, sw[i], hosts + 2 * dim + 2, sw[j], hosts + 2 * dim + 1);
		}
	}
	struct spec hs = *sp;
	add_hosts(f, &hs, sw, n, hosts, n * hosts);
	free(sw);
	return 0;
}

/* Dragonfly: groups of `routers` switches, all-to-all inside a group, `global` links per
 * switch to other groups, `hosts` hosts per switch. */
static int gen_dragonfly(struct fabric *f, const struct spec *sp, struct fs_error *err)
{
	unsigned g = sp->groups, a = sp->routers, h = sp->global, p = sp->hosts;
	if (g < 2 || a < 1 || p < 1 || h < 1)
		return gerr(err, "dragonfly: groups>=2, routers, hosts and global >= 1");
	if (a * h < g - 1)
		return gerr(err, "dragonfly: routers*global must reach the other %u groups", g - 1);
	unsigned nports = p + (a - 1) + h;
	if (nports > 254)
		return gerr(err, "dragonfly: too many ports per switch");
	if (too_big(err, "dragonfly", (uint64_t)g * a, nports, (uint64_t)g * a * p, sp->hca_ports) <
	    0)
		return -1;
	uint32_t *sw = calloc(g * a, sizeof(uint32_t));
	for (unsigned gi = 0; gi < g; gi++)
		for (unsigned r = 0; r < a; r++)
			sw[gi * a + r] = add(f, NODE_TYPE_SWITCH, nports, "df-%u-%u", gi, r);
	for (unsigned gi = 0; gi < g; gi++)
		for (unsigned r = 0; r < a; r++)
			for (unsigned s = r + 1; s < a; s++)
				link_nodes(f, sw[gi * a + r], p + s, sw[gi * a + s], p + r + 1);
	/* global links: group gi, link k of the group goes to group (gi + 1 + k) % g */
	unsigned *used = calloc(g * a, sizeof(unsigned));
	for (unsigned gi = 0; gi < g; gi++) {
		for (unsigned k = 0; k < g - 1; k++) {
			unsigned gj = (gi + 1 + k) % g;
			if (gj < gi)
				continue;                    /* made from the other side */
			unsigned kb = (gi + g - gj - 1) % g; /* gi's index in gj's list */
			uint32_t x = sw[gi * a + k % a], y = sw[gj * a + kb % a];
			if (used[gi * a + k % a] >= h || used[gj * a + kb % a] >= h)
				continue;
			link_nodes(f, x, p + a + used[gi * a + k % a]++, y,
			           p + a + used[gj * a + kb % a]++);
		}
	}
	free(used);
	add_hosts(f, sp, sw, g * a, p, g * a * p);
	free(sw);
	return 0;
}

/* Random irregular graph: a random spanning tree keeps it connected, then random extra
 * links; hosts spread round-robin. */
static int gen_random(struct fabric *f, const struct spec *sp, struct fs_error *err)
{
	unsigned n = sp->switches, k = sp->radix, hosts = sp->hosts;
	if (n < 1 || k < 3 || k > 254)
		return gerr(err, "random: switches>=1, radix 3 to 254");
	unsigned host_ports = (hosts + n - 1) / n;
	if (host_ports + 1 >= k)
		return gerr(err, "random: radix %u leaves no switch-to-switch ports", k);
	if (too_big(err, "random", n, k, hosts, sp->hca_ports) < 0)
		return -1;
	unsigned isl = k - host_ports; /* inter-switch ports per switch */
	uint32_t *sw = calloc(n, sizeof(uint32_t));
	unsigned *used = calloc(n, sizeof(unsigned));
	unsigned seed = sp->seed;
	for (unsigned i = 0; i < n; i++)
		sw[i] = add(f, NODE_TYPE_SWITCH, k, "rsw-%u", i + 1);
	for (unsigned i = 1; i < n; i++) {
		unsigned j, tries = 0;
		do
			j = (unsigned)rand_r(&seed) % i;
		while (used[j] >= isl && ++tries < 1000);
		if (used[j] >= isl || used[i] >= isl)
			break;
		link_nodes(f, sw[i], host_ports + 1 + used[i]++, sw[j], host_ports + 1 + used[j]++);
	}
	unsigned extra = sp->links ? sp->links : n;
	for (unsigned e = 0, tries = 0; e < extra && tries < extra * 20; tries++) {
		unsigned i = (unsigned)rand_r(&seed) % n, j = (unsigned)rand_r(&seed) % n;
		if (i == j || used[i] >= isl || used[j] >= isl)
			continue;
		link_nodes(f, sw[i], host_ports + 1 + used[i]++, sw[j], host_ports + 1 + used[j]++);
		e++;
	}
	add_hosts(f, sp, sw, n, host_ports, hosts);
	free(sw);
	free(used);
	return 0;
}

/* Remove switches and links chosen by the seed, to model a degraded fabric. */
static void degrade(struct fabric *f, const struct spec *sp)
{
	unsigned seed = sp->seed;
	for (unsigned i = 0; i < sp->missing_links; i++) {
		for (int tries = 0; tries < 1000; tries++) {
			uint32_t p = (uint32_t)rand_r(&seed) % f->nports;
			struct fs_port *port = &f->ports[p];
			if (port->peer == FS_NONE || !fs_is_switch(f, port->node) ||
			    !fs_is_switch(f, f->ports[port->peer].node))
				continue;
			f->ports[port->peer].peer = FS_NONE;
			port->peer = FS_NONE;
			break;
		}
	}
	for (unsigned i = 0; i < sp->missing_switches && f->nsws; i++) {
		uint32_t s = (uint32_t)rand_r(&seed) % f->nsws;
		uint32_t node = f->sws[s].node;
		for (unsigned num = 1; num <= f->nodes[node].nports; num++) {
			uint32_t p = fabric_port(f, node, num);
			if (f->ports[p].peer != FS_NONE) {
				f->ports[f->ports[p].peer].peer = FS_NONE;
				f->ports[p].peer = FS_NONE;
			}
		}
		f->nodes[node].present = false;
	}
}

/* speed=, width= for switch ports, host-speed=, host-width= for CA ports (default: as the
 * switches): every speed up to the one named, every width up to the one named. */
static void set_speeds(struct fabric *f, const struct spec *sp)
{
	if (sp->speed == LINK_SPEEDS && !sp->width && sp->host_speed == LINK_SPEEDS &&
	    !sp->host_width)
		return;
	for (uint32_t p = 0; p < f->nports; p++) {
		struct fs_port *port = &f->ports[p];
		bool host = !fs_is_switch(f, port->node);
		unsigned spd = host && sp->host_speed < LINK_SPEEDS ? sp->host_speed : sp->speed;
		uint8_t w = host && sp->host_width ? sp->host_width : sp->width;
		if (spd == LINK_SPEEDS)
			spd = LINK_QDR;
		if (!w)
			w = LINK_WIDTH_4X;
		port->speed_cap = (uint16_t)((2u << spd) - 1);
		port->width_cap = fabric_port_widths(w, spd);
	}
}

/* slow-links=N: N links between switches whose cable carries one speed less than their ends
 * run: links trained below their capability, which verify reports. */
static void slow_links(struct fabric *f, const struct spec *sp)
{
	unsigned seed = sp->seed * 7919u + 17u, made = 0;
	for (unsigned tries = 0; made < sp->slow_links && tries < 100 * sp->slow_links; tries++) {
		uint32_t p = (uint32_t)rand_r(&seed) % f->nports;
		const struct fs_port *port = &f->ports[p];
		if (port->peer == FS_NONE || !fs_is_switch(f, port->node) ||
		    !fs_is_switch(f, f->ports[port->peer].node) || port->cable_speed)
			continue;
		unsigned now = mad_link_speed_active(&port->pi);
		if (now == LINK_SDR || now >= LINK_SPEEDS)
			continue;
		fabric_cable_limit(f, p, 0, now - 1);
		made++;
	}
}

int generate(struct fabric *f, const char *text, struct fs_error *err)
{
	struct spec sp;
	if (parse_spec(text, &sp, err) < 0)
		return -1;
	if (sp.hca_ports < 1 || sp.hca_ports > 2)
		return gerr(err, "hca-ports must be 1 or 2");
	int rc;
	if (!strcmp(sp.kind, "fattree"))
		rc = gen_fattree(f, &sp, err);
	else if (!strcmp(sp.kind, "torus"))
		rc = gen_grid(f, &sp, true, err);
	else if (!strcmp(sp.kind, "mesh"))
		rc = gen_grid(f, &sp, false, err);
	else if (!strcmp(sp.kind, "dragonfly"))
		rc = gen_dragonfly(f, &sp, err);
	else if (!strcmp(sp.kind, "random"))
		rc = gen_random(f, &sp, err);
	else
		return gerr(err,
		            "unknown generator \"%s\" (fattree, torus, mesh, dragonfly, random)",
		            sp.kind);
	if (rc < 0)
		return rc;
	degrade(f, &sp);
	set_speeds(f, &sp);
	for (uint32_t i = 0; sp.esp0 && i < f->nsws; i++)
		f->sws[i].si.enhanced_port0 = 1;
	if (sp.vports > 0xffff)
		return gerr(err, "vports: at most 65535 per port");
	fabric_finalize(f);
	for (uint32_t p = 0; sp.vports && p < f->nports; p++)
		if (!fs_is_switch(f, f->ports[p].node) && f->ports[p].num)
			fabric_virt_cap(f, p, sp.vports);
	slow_links(f, &sp);
	return 0;
}

unsigned generate_hosts(const char *text)
{
	struct fabric f;
	struct fs_error err;
	fabric_init(&f);
	unsigned n = 0;
	if (generate(&f, text, &err) == 0)
		for (uint32_t i = 0; i < f.nnodes; i++)
			n += f.nodes[i].type == NODE_TYPE_CA;
	fabric_free(&f);
	return n;
}
