/* Alias GUIDs: GUIDInfoRecord Set and Delete (IBA 15.2.5.18), as virtualized HCAs and
 * some storage stacks use them to give one port several GIDs.
 *
 * A Set names the port by LID and a GUIDInfo block, and in the component mask which of the
 * block's eight GUIDs it sets: a non-zero GUID is taken as given unless another port uses
 * it, a zero one asks the SA to make one up. Index 0 of block 0 is the port GUID and never
 * changes. A Delete clears the masked entries that hold the GUID given (or any, for 0). The
 * SM writes the block into the port's GUIDInfo table at once, and again after sweeps that
 * changed the fabric (a port that was reset forgot it). An alias GID names its port
 * wherever the SA takes GIDs (paths, multicast, services). Aliases go with their port, and
 * survive restarts in the state file. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sa/sa_int.h"

#define GIR_COMP_LID   (1ull << 0)
#define GIR_COMP_BLOCK (1ull << 1)
#define GIR_COMP_GUID0 4                     /* bits 4..11: GUID0..GUID7 */
#define SA_GUID_BASE   0x02c9ff0000000000ull /* made-up aliases: an OUI no vendor ships */
#define SA_MAX_ALIASES 65536

struct sa_alias {
	uint64_t guid, port_guid;
	uint32_t port;
	uint16_t index; /* in the port's GUIDInfo table: block * 8 + entry */
};

void sa_guidinfo_components(struct sa_components *c)
{
	static const struct sa_component head[] = {
	    {0, 16, false}, {16, 8, false}, {24, 8, false}, {32, 32, false}};
	c->n = 0;
	for (size_t i = 0; i < sizeof(head) / sizeof(head[0]); i++)
		c->c[c->n++] = head[i];
	for (unsigned i = 0; i < 8; i++)
		c->c[c->n++] = (struct sa_component){(uint16_t)(64 + 64 * i), 64, false};
}

uint64_t sa_alias_at(const struct sa *sa, uint32_t port, unsigned index)
{
	for (uint32_t i = 0; i < sa->naliases; i++)
		if (sa->aliases[i].port == port && sa->aliases[i].index == index)
			return sa->aliases[i].guid;
	return 0;
}

uint32_t sa_alias_port(const struct sa *sa, uint64_t guid)
{
	uint32_t i = u64map_get(&sa->alias_by_guid, guid);
	return i == U64MAP_NONE ? SM_NONE : sa->aliases[i].port;
}

static void remove_alias(struct sa *sa, uint32_t i)
{
	u64map_del(&sa->alias_by_guid, sa->aliases[i].guid);
	if (i != sa->naliases - 1) {
		sa->aliases[i] = sa->aliases[sa->naliases - 1];
		u64map_put(&sa->alias_by_guid, sa->aliases[i].guid, i);
	}
	sa->naliases--;
}

static int add_alias(struct sa *sa, uint32_t port, uint64_t port_guid, unsigned index,
                     uint64_t guid)
{
	if (sa->naliases == sa->aliases_cap) {
		uint32_t ncap = sa->aliases_cap ? sa->aliases_cap * 2 : 16;
		struct sa_alias *n =
		    ncap <= SA_MAX_ALIASES ? realloc(sa->aliases, sizeof(*n) * ncap) : NULL;
		if (!n)
			return -1;
		sa->aliases = n;
		sa->aliases_cap = ncap;
	}
	if (u64map_put(&sa->alias_by_guid, guid, sa->naliases) < 0)
		return -1;
	sa->aliases[sa->naliases++] = (struct sa_alias){
	    .guid = guid, .port_guid = port_guid, .port = port, .index = (uint16_t)index};
	return 0;
}

/* Is the GUID free: no port, node or alias uses it? */
static bool guid_free(const struct sa *sa, uint64_t guid)
{
	const struct topo *t = &sa->sm->topo;
	return guid && u64map_get(&t->by_port_guid, guid) == U64MAP_NONE &&
	       u64map_get(&t->by_guid, guid) == U64MAP_NONE &&
	       u64map_get(&sa->alias_by_guid, guid) == U64MAP_NONE;
}

static void block_of(const struct sa *sa, uint32_t p, unsigned b, struct mad_guid_info *g)
{
	for (unsigned i = 0; i < 8; i++)
		g->guid[i] = b == 0 && i == 0 ? topo_port_guid(&sa->sm->topo, p)
		                              : sa_alias_at(sa, p, b * 8 + i);
}

static void on_guidinfo_set(struct sm *sm, const struct mad_result *res, const struct mad_smp *smp,
                            void *ctx)
{
	(void)res;
	const uint32_t *ref = ctx; /* port, block */
	if (!smp || smp->dr_status)
		log_warn(sm->log, "sa",
		         "GUIDInfo block %u of port GUID 0x%016llx not written (%s): its aliases "
		         "are not on the port until the next sweep",
		         ref[1], (unsigned long long)topo_port_guid(&sm->topo, ref[0]),
		         smp ? mad_status_str(smp->dr_status) : "no answer");
}

/* Write a block into the port's GUIDInfo table. */
static void program_block(struct sa *sa, uint32_t p, unsigned b)
{
	struct mad_guid_info g;
	block_of(sa, p, b, &g);
	uint8_t data[64] = {0};
	mad_guid_info_encode(&g, data, sizeof(data), NULL);
	uint32_t ref[2] = {p, b};
	sm_send_dr_port(sa->sm, p, MAD_METHOD_SET, MAD_ATTR_GUID_INFO, b, data, sizeof(data),
	                on_guidinfo_set, ref, sizeof(ref));
}

/* The port a GUIDInfoRecord request names, and its block, checked. */
static uint16_t target(struct sa *sa, const struct mad_guid_info_record *q, uint64_t mask,
                       uint32_t *port)
{
	const struct topo *t = &sa->sm->topo;
	if ((mask & (GIR_COMP_LID | GIR_COMP_BLOCK)) != (GIR_COMP_LID | GIR_COMP_BLOCK))
		return MAD_STATUS_SA_INSUF_COMPONENTS;
	uint32_t p = q->lid < SM_LID_COUNT ? t->lid_port[q->lid] : SM_NONE;
	if (p == SM_NONE)
		return MAD_STATUS_SA_NO_RECORDS;
	unsigned blocks = t->ports[p].pi.guid_cap ? (t->ports[p].pi.guid_cap + 7u) / 8u : 1u;
	if (q->block_num >= blocks)
		return MAD_STATUS_SA_REQ_INVALID;
	/* a port sets its own aliases; anyone else needs the SM_Key */
	if (!sa->trusted &&
	    (sa->requester == SM_NONE || topo_lid_port(t, sa->requester) != topo_lid_port(t, p)))
		return MAD_STATUS_SA_REQ_DENIED;
	*port = p;
	return 0;
}

uint16_t sa_guidinfo_change(struct sa *sa, bool set, const uint8_t *req, uint64_t mask,
                            uint8_t *answer)
{
	struct mad_guid_info_record q;
	if (mad_guid_info_record_decode(req, MAD_SA_DATA_SIZE, &q, NULL) < 0)
		return MAD_STATUS_SA_REQ_INVALID;
	uint32_t p;
	uint16_t st = target(sa, &q, mask, &p);
	if (st)
		return st;
	uint64_t pg = topo_port_guid(&sa->sm->topo, p);
	bool changed = false;
	for (unsigned i = 0; i < 8; i++) {
		unsigned index = q.block_num * 8u + i;
		if (!(mask & (1ull << (GIR_COMP_GUID0 + i))) || index == 0)
			continue; /* not asked, or the port GUID itself */
		uint64_t want = q.info.guid[i], have = sa_alias_at(sa, p, index);
		if (!set) {
			if (have && (!want || want == have)) {
				remove_alias(sa, (uint32_t)u64map_get(&sa->alias_by_guid, have));
				changed = true;
			}
			continue;
		}
		if (want == have && want)
			continue;
		if (!want) { /* the SA makes one up */
			do
				want = SA_GUID_BASE + ++sa->alias_seq;
			while (!guid_free(sa, want));
		} else if (!guid_free(sa, want)) {
			continue; /* in use elsewhere: the entry stays as it was, as OpenSM does */
		}
		if (have)
			remove_alias(sa, (uint32_t)u64map_get(&sa->alias_by_guid, have));
		if (add_alias(sa, p, pg, index, want) < 0)
			return MAD_STATUS_SA_NO_RESOURCES;
		changed = true;
	}
	if (changed) {
		program_block(sa, p, q.block_num);
		sa_state_changed(sa);
	}
	struct mad_guid_info_record a = {.lid = q.lid, .block_num = q.block_num};
	block_of(sa, p, q.block_num, &a.info);
	mad_guid_info_record_encode(&a, answer, MAD_SA_DATA_SIZE, NULL);
	return 0;
}

void sa_guidinfo_sweep_done(struct sa *sa)
{
	const struct topo *t = &sa->sm->topo;
	for (uint32_t i = 0; i < sa->naliases;) {
		/* the port left: the alias goes with it */
		struct sa_alias *a = &sa->aliases[i];
		uint32_t now = u64map_get(&t->by_port_guid, a->port_guid);
		if (now == U64MAP_NONE) {
			uint32_t n = u64map_get(&t->by_guid, a->port_guid);
			now = n != U64MAP_NONE && topo_is_switch(t, n) ? t->nodes[n].first_port
			                                               : U64MAP_NONE;
		}
		if (now == U64MAP_NONE || !t->nodes[t->ports[now].node].present) {
			remove_alias(sa, i);
			sa_state_changed(sa);
			continue;
		}
		a->port = now;
		i++;
	}
	if (!sa->sm->structural && sa->aliases_programmed)
		return;
	/* after changes to the fabric, every aliased block again: a reset port forgot them */
	for (uint32_t i = 0; i < sa->naliases; i++) {
		bool first = true;
		for (uint32_t k = 0; k < i && first; k++)
			first = !(sa->aliases[k].port == sa->aliases[i].port &&
			          sa->aliases[k].index / 8 == sa->aliases[i].index / 8);
		if (first)
			program_block(sa, sa->aliases[i].port, sa->aliases[i].index / 8u);
	}
	sa->aliases_programmed = true;
}

void sa_guidinfo_save(struct sa *sa, FILE *f)
{
	for (uint32_t i = 0; i < sa->naliases; i++)
		fprintf(f, "alias 0x%016llx %u 0x%016llx\n",
		        (unsigned long long)sa->aliases[i].port_guid, sa->aliases[i].index,
		        (unsigned long long)sa->aliases[i].guid);
}

bool sa_guidinfo_restore(struct sa *sa, const char *line)
{
	unsigned long long pg, guid;
	unsigned index;
	if (sscanf(line, "%llx %u %llx", &pg, &index, &guid) != 3 || !index || index >= 8 * 256)
		return false;
	uint32_t p = sa_guid_port(sa, pg);
	if (p == SM_NONE || !guid_free(sa, guid))
		return false;
	return add_alias(sa, p, pg, index, guid) == 0;
}

void sa_guidinfo_free(struct sa *sa)
{
	free(sa->aliases);
	u64map_free(&sa->alias_by_guid);
}
