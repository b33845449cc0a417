/* file: forwarding tables loaded from a dump in the format ibroute and OpenSM's dump_lfts
 * print (and `ibsa dump files` writes as opensm-lfts.dump), for sites that hand-tune their
 * routes. The file must route every LID the fabric has at every switch it has, through ports
 * that have links, without a loop; otherwise the engine fails naming the first switch and
 * LID that do not, and the chain moves on (to minhop as the last resort). Entries for
 * switches or LIDs the fabric does not have are left aside. */
#include <stdlib.h>
#include <string.h>

#include "routing/engine.h"
#include "routing/files.h"

struct load {
	struct routing_ctx *ctx;
	uint32_t sw; /* the switch being read, UINT32_MAX: not in the fabric */
	uint32_t unknown_switches, entries;
	uint8_t *seen; /* per switch: its header was read */
};

static int on_switch(void *arg, uint64_t guid, unsigned line)
{
	(void)line;
	struct load *l = arg;
	struct topo *t = l->ctx->t;
	uint32_t n = u64map_get(&t->by_guid, guid);
	if (n == U64MAP_NONE || !topo_is_switch(t, n) || !t->nodes[n].present) {
		l->sw = UINT32_MAX;
		l->unknown_switches++;
		return 0;
	}
	l->sw = t->nodes[n].sw;
	l->seen[l->sw] = 1;
	return 0;
}

static int on_entry(void *arg, uint16_t lid, uint8_t port, unsigned line)
{
	(void)line;
	struct load *l = arg;
	if (l->sw == UINT32_MAX)
		return 0;
	struct topo_switch *sw = &l->ctx->t->sws[l->sw];
	if (lid < sw->lft_size) {
		sw->lft[lid] = port;
		l->entries++;
	}
	return 0;
}

static void sw_name(const struct routing_ctx *ctx, uint32_t s, char *buf, size_t len)
{
	const struct topo_node *n = &ctx->t->nodes[ctx->t->sws[s].node];
	snprintf(buf, len, "\"%s\" (0x%016llx)", n->desc, (unsigned long long)n->guid);
}

/* Every switch routes every LID along links to its owner, without a loop: one memoised walk
 * per LID (each switch is settled once), O(switches x LIDs). */
enum { W_UNKNOWN = 0, W_VISITING, W_OK };

static int check_tables(struct routing_ctx *ctx)
{
	struct topo *t = ctx->t;
	uint32_t ns = ctx->nsw;
	uint8_t *st = malloc(ns + 1);
	uint32_t *path = malloc(sizeof(uint32_t) * (ns + 1));
	if (!st || !path) {
		free(st);
		free(path);
		snprintf(ctx->why, sizeof(ctx->why), "out of memory");
		return -1;
	}
	const char *file = ctx->cfg->lfts_file;
	char name[160];
	int rc = 0;
	for (uint32_t owner = 0; owner < ns && !rc; owner++) {
		for (uint32_t d = ctx->dst_start[owner]; d < ctx->dst_start[owner + 1] && !rc;
		     d++) {
			uint16_t lid = ctx->dst[d].lid;
			memset(st, W_UNKNOWN, ns);
			st[owner] = W_OK;
			if (t->sws[owner].lft[lid] != ctx->dst[d].port) {
				sw_name(ctx, owner, name, sizeof(name));
				snprintf(
				    ctx->why, sizeof(ctx->why),
				    "%.200s: switch %s sends LID 0x%04x to port %u, not to port %u "
				    "where it is",
				    file, name, lid, t->sws[owner].lft[lid], ctx->dst[d].port);
				rc = -1;
				break;
			}
			for (uint32_t s0 = 0; s0 < ns && !rc; s0++) {
				if (st[s0] != W_UNKNOWN || !t->nodes[t->sws[s0].node].present)
					continue;
				uint32_t n = 0, s = s0;
				/* follow the table until a settled switch */
				while (st[s] == W_UNKNOWN) {
					st[s] = W_VISITING;
					path[n++] = s;
					const struct topo_node *nd = &t->nodes[t->sws[s].node];
					uint8_t port = t->sws[s].lft[lid];
					uint32_t peer = port && port <= nd->nports
					                    ? t->ports[nd->first_port + port].peer
					                    : TOPO_NONE;
					if (port == 0xff || port > nd->nports ||
					    peer == TOPO_NONE ||
					    !topo_is_switch(t, t->ports[peer].node))
						sw_name(ctx, s, name, sizeof(name));
					if (port == 0xff) {
						snprintf(
						    ctx->why, sizeof(ctx->why),
						    "%.200s: no entry for LID 0x%04x at switch %s",
						    file, lid, name);
						rc = -1;
						break;
					}
					if (port > nd->nports) {
						snprintf(ctx->why, sizeof(ctx->why),
						         "%.200s: switch %s sends LID 0x%04x to "
						         "port %u; "
						         "it has %u ports",
						         file, name, lid, port, nd->nports);
						rc = -1;
						break;
					}
					if (peer == TOPO_NONE ||
					    !topo_is_switch(t, t->ports[peer].node)) {
						snprintf(ctx->why, sizeof(ctx->why),
						         "%.200s: switch %s sends LID 0x%04x to "
						         "port %u, which "
						         "%s",
						         file, name, lid, port,
						         peer == TOPO_NONE
						             ? "has no link"
						             : "leads to another endpoint");
						rc = -1;
						break;
					}
					uint32_t from = s;
					s = t->nodes[t->ports[peer].node].sw;
					if (st[s] == W_VISITING) {
						sw_name(ctx, from, name, sizeof(name));
						snprintf(
						    ctx->why, sizeof(ctx->why),
						    "%.200s: LID 0x%04x loops through switch %s",
						    file, lid, name);
						rc = -1;
						break;
					}
				}
				for (uint32_t i = 0; i < n; i++)
					st[path[i]] = W_OK;
			}
		}
	}
	free(st);
	free(path);
	return rc;
}

static int file_unicast(struct routing_ctx *ctx, void *state)
{
	(void)state;
	const char *path = ctx->cfg->lfts_file;
	if (!path[0]) {
		snprintf(ctx->why, sizeof(ctx->why), "lfts_file is not set");
		return -1;
	}
	struct load l = {.ctx = ctx, .sw = UINT32_MAX, .seen = calloc(ctx->nsw + 1, 1)};
	if (!l.seen) {
		snprintf(ctx->why, sizeof(ctx->why), "out of memory");
		return -1;
	}
	const struct lfts_parse_cb cb = {.sw = on_switch, .entry = on_entry};
	int rc = routing_read_lfts(path, &cb, &l, ctx->why, sizeof(ctx->why));
	for (uint32_t s = 0; s < ctx->nsw && !rc; s++) {
		if (!l.seen[s] && ctx->t->nodes[ctx->t->sws[s].node].present) {
			char name[160];
			sw_name(ctx, s, name, sizeof(name));
			snprintf(ctx->why, sizeof(ctx->why), "%.200s: has no table for switch %s",
			         path, name);
			rc = -1;
		}
	}
	free(l.seen);
	if (!rc)
		rc = check_tables(ctx);
	if (!rc)
		log_info(ctx->log, "routing",
		         "file: %u entries from %s (%u switch(es) there are not in the fabric)",
		         l.entries, path, l.unknown_switches);
	return rc;
}

const struct routing_engine routing_file = {
    .name = "file",
    .summary = "forwarding tables from lfts_file (an ibroute / dump_lfts dump)",
    .unicast = file_unicast,
};
