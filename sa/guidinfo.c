/* Alias GUIDs: GUIDInfoRecord Set and Delete (IBA 15.2.5.18), as virtualized HCAs and
 * some storage stacks use them to give one port several GIDs.
 *
 * A Set names the port by LID and a GUIDInfo block, and in the component mask which of the
 * block's eight GUIDs it sets: a non-zero GUID is taken as given unless another port uses
 * it, a zero one asks the SA to make one up. Index 0 of block 0 is the port GUID and never
 * changes. A Delete clears the masked entries that hold the GUID given (or any, for 0). The
 * aliases are model state (fabric/aliases.c); the SM writes the block into the port's
 * GUIDInfo table at once, and again after sweeps that changed the fabric (a port that was
 * reset forgot it). An alias GID names its port
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

/* The port a GUIDInfoRecord request names, and its block, checked. */
static uint16_t target(struct sa_req *rq, const struct mad_guid_info_record *q, uint64_t mask,
                       uint32_t *port)
{
	struct sa *sa = rq->sa;
	const struct topo *t = sa->t;
	if ((mask & (GIR_COMP_LID | GIR_COMP_BLOCK)) != (GIR_COMP_LID | GIR_COMP_BLOCK))
		return MAD_STATUS_SA_INSUF_COMPONENTS;
	uint32_t p = q->lid < TOPO_LID_COUNT ? t->lid_port[q->lid] : TOPO_NONE;
	if (p == TOPO_NONE)
		return MAD_STATUS_SA_NO_RECORDS;
	unsigned blocks = t->ports[p].pi.guid_cap ? (t->ports[p].pi.guid_cap + 7u) / 8u : 1u;
	if (q->block_num >= blocks)
		return MAD_STATUS_SA_REQ_INVALID;
	/* a port sets its own aliases; anyone else needs the SM_Key */
	if (!rq->trusted &&
	    (rq->requester == TOPO_NONE || topo_lid_port(t, rq->requester) != topo_lid_port(t, p)))
		return MAD_STATUS_SA_REQ_DENIED;
	*port = p;
	return 0;
}

uint16_t sa_guidinfo_change(struct sa_req *rq, bool set, const uint8_t *req, uint64_t mask,
                            uint8_t *answer)
{
	struct sa *sa = rq->sa;
	struct topo *t = sa->t;
	struct mad_guid_info_record q;
	if (mad_guid_info_record_decode(req, MAD_SA_DATA_SIZE, &q, NULL) < 0)
		return MAD_STATUS_SA_REQ_INVALID;
	uint32_t p;
	uint16_t st = target(rq, &q, mask, &p);
	if (st)
		return st;
	bool changed = false;
	for (unsigned i = 0; i < 8; i++) {
		unsigned index = q.block_num * 8u + i;
		if (!(mask & (1ull << (GIR_COMP_GUID0 + i))) || index == 0)
			continue; /* not asked, or the port GUID itself */
		uint64_t want = q.info.guid[i], have = topo_alias_at(t, p, index);
		if (!set) {
			if (have && (!want || want == have)) {
				topo_alias_del(t, have);
				changed = true;
			}
			continue;
		}
		if (want == have && want)
			continue;
		if (!want) { /* the SA makes one up */
			do
				want = SA_GUID_BASE + ++sa->alias_seq;
			while (!topo_guid_free(t, want));
		} else if (!topo_guid_free(t, want)) {
			continue; /* in use elsewhere: the entry stays as it was, as OpenSM does */
		}
		if (have)
			topo_alias_del(t, have);
		if (topo_alias_add(t, p, index, want) < 0)
			return MAD_STATUS_SA_NO_RESOURCES;
		changed = true;
	}
	if (changed) {
		sm_aliases_changed(sa->sm, p, q.block_num);
		sa_state_changed(sa);
	}
	struct mad_guid_info_record a = {.lid = q.lid, .block_num = q.block_num};
	topo_guid_info_block(t, p, q.block_num, &a.info);
	mad_guid_info_record_encode(&a, answer, MAD_SA_DATA_SIZE, NULL);
	return 0;
}

void sa_guidinfo_sweep_done(struct sa *sa)
{
	/* aliases whose port left went with it (the SM's discovery): the state file follows */
	if (sa->t->alias_changes != sa->alias_changes_saved)
		sa_state_changed(sa);
}

void sa_guidinfo_save(struct sa *sa, FILE *f)
{
	const struct topo *t = sa->t;
	for (uint32_t i = 0; i < t->aliases.n; i++)
		fprintf(f, "alias 0x%016llx %u 0x%016llx\n",
		        (unsigned long long)t->aliases.v[i].port_guid, t->aliases.v[i].index,
		        (unsigned long long)t->aliases.v[i].guid);
	sa->alias_changes_saved = t->alias_changes;
}

bool sa_guidinfo_restore(struct sa *sa, const char *line)
{
	unsigned long long pg, guid;
	unsigned index;
	if (sscanf(line, "%llx %u %llx", &pg, &index, &guid) != 3 || !index || index >= 8 * 256)
		return false;
	uint32_t p = sa_guid_port(sa, pg);
	if (p == TOPO_NONE || !topo_guid_free(sa->t, guid) || topo_alias_at(sa->t, p, index))
		return false;
	if (topo_alias_add(sa->t, p, index, guid) < 0)
		return false;
	sm_aliases_changed(sa->sm, p, index / 8u);
	return true;
}

void sa_guidinfo_forget(struct sa *sa)
{
	struct topo *t = sa->t;
	while (t->aliases.n) {
		const struct topo_alias *a = &t->aliases.v[t->aliases.n - 1];
		uint32_t p = topo_alias_port(t, a->guid);
		unsigned index = a->index;
		topo_alias_del(t, a->guid);
		if (p != TOPO_NONE)
			sm_aliases_changed(sa->sm, p, index / 8u);
	}
	sa->alias_changes_saved = t->alias_changes;
}
