/* QoS for the SA: which QoS level a path gets (its SL, MTU and rate limits, packet life),
 * by the policy's rules: the first whose service ID range, P_Key, source and destination
 * groups all match, else the default level. Each port's groups are worked out once per
 * sweep (GUIDs through one hash map, node description globs, partition membership), so a
 * PathRecord costs one pass over the rules. */
#include <fnmatch.h>
#include <stdlib.h>
#include <string.h>

#include "sa/sa_int.h"

static uint64_t port_groups(const struct sa *sa, const struct config_qos *q, uint32_t p,
                            const struct u64map *by_guid, const uint64_t *guid_masks,
                            const uint16_t *group_pkey)
{
	const struct topo *t = sa->t;
	const struct topo_node *n = &t->nodes[t->ports[p].node];
	uint64_t m = 0;
	uint32_t i = u64map_get(by_guid, topo_port_guid(t, p));
	if (i != U64MAP_NONE)
		m |= guid_masks[i];
	if ((i = u64map_get(by_guid, n->guid)) != U64MAP_NONE)
		m |= guid_masks[i];
	for (unsigned g = 0; g < q->ngroups; g++) {
		if (q->groups[g].node_desc[0] && !fnmatch(q->groups[g].node_desc, n->desc, 0))
			m |= 1ull << g;
		if (group_pkey[g] && topo_port_has_pkey(t, p, group_pkey[g], NULL))
			m |= 1ull << g;
	}
	return m;
}

void sa_qos_sweep_done(struct sa *sa)
{
	const struct topo *t = sa->t;
	const struct config_qos *q = sa->cfg->qos;
	if (!q || !q->ngroups) {
		free(sa->qos_groups);
		sa->qos_groups = NULL;
		sa->qos_groups_cap = 0;
		return;
	}
	if (t->nports > sa->qos_groups_cap || !sa->qos_groups) {
		uint64_t *n = realloc(sa->qos_groups, sizeof(uint64_t) * (t->nports + 1));
		if (!n)
			return;
		sa->qos_groups = n;
		sa->qos_groups_cap = t->nports;
	}
	memset(sa->qos_groups, 0, sizeof(uint64_t) * sa->qos_groups_cap);
	/* GUID -> the groups that list it */
	struct u64map by_guid = {0};
	uint64_t *masks = NULL;
	uint32_t nmasks = 0, total = 0;
	uint16_t group_pkey[CONFIG_QOS_MAX] = {0};
	for (unsigned g = 0; g < q->ngroups; g++) {
		total += q->groups[g].nguids;
		for (unsigned k = 0; q->groups[g].partition[0] && k < sa->cfg->npartitions; k++)
			if (!strcmp(sa->cfg->partitions[k].name, q->groups[g].partition))
				group_pkey[g] = sa->cfg->partitions[k].pkey & 0x7fff;
	}
	if (total && !(masks = calloc(total, sizeof(uint64_t))))
		return;
	for (unsigned g = 0; g < q->ngroups; g++)
		for (unsigned k = 0; k < q->groups[g].nguids; k++) {
			uint64_t guid = q->groups[g].guids[k];
			uint32_t i = u64map_get(&by_guid, guid);
			if (i == U64MAP_NONE) {
				if (u64map_put(&by_guid, guid, nmasks) < 0)
					goto out;
				i = nmasks++;
			}
			masks[i] |= 1ull << g;
		}
	for (uint32_t p = 0; p < t->nports; p++)
		if (t->ports[p].lid && t->nodes[t->ports[p].node].present)
			sa->qos_groups[p] = port_groups(sa, q, p, &by_guid, masks, group_pkey);
out:
	u64map_free(&by_guid);
	free(masks);
}

const struct config_qos_level *sa_qos_level(const struct sa *sa, uint32_t src, uint32_t dst,
                                            bool has_sid, uint64_t sid, uint16_t pkey)
{
	const struct config_qos *q = sa->cfg->qos;
	if (!q)
		return NULL;
	uint64_t sg = sa->qos_groups && src < sa->qos_groups_cap ? sa->qos_groups[src] : 0;
	uint64_t dg = sa->qos_groups && dst < sa->qos_groups_cap ? sa->qos_groups[dst] : 0;
	for (unsigned i = 0; i < q->nrules; i++) {
		const struct config_qos_rule *r = &q->rules[i];
		if (r->has_sid && (!has_sid || sid < r->sid_lo || sid > r->sid_hi))
			continue;
		if (r->has_pkey && r->pkey != (pkey & 0x7fff))
			continue;
		if (r->src >= 0 && !(sg >> r->src & 1))
			continue;
		if (r->dst >= 0 && !(dg >> r->dst & 1))
			continue;
		return &q->levels[r->level];
	}
	return q->default_level >= 0 ? &q->levels[q->default_level] : NULL;
}
