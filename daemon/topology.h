/* The fabric for schedulers and people: Slurm's topology.conf (topology/tree) and a
 * graphviz graph, written from the SM's model. The control socket serves them ("topology
 * slurm", "topology dot"), and so does the partition API (GET /topology/slurm and
 * /topology/dot), both with these functions and sm_fabric(sm), so that every way out gives
 * the same text. */
#ifndef IBSMD_DAEMON_TOPOLOGY_H
#define IBSMD_DAEMON_TOPOLOGY_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "fabric/fabric.h"

/* A switch's level: 0 for a switch with hosts, else its hops from the nearest one over the
 * links routing uses (a fat tree's leaves, then its spines or cores: the same distance by
 * which the up/down engines find their roots); TOPOLOGY_NO_LEVEL when no host switch
 * reaches it. levels: t->nsws entries. The highest level, or -1 out of memory. */
#define TOPOLOGY_NO_LEVEL UINT16_MAX
int topology_levels(const struct topo *t, uint16_t *levels);

/* Slurm's topology for the tree plugin: topology.conf (a line per switch), or topology.yaml
 * (Slurm 25.05 and later: a tree topology named topology_name, "ibsmd" when NULL, the
 * cluster's default). A leaf switch lists its hosts (Nodes=), each host named by the first
 * word of its node_name_map name or else of its NodeDescription; a switch above lists the
 * switches one level below it (Switches=); names in Slurm's hostlist form (host-[1-18]).
 * On a rail-optimized fabric (a host under several leaves, one HCA on each) the switches
 * that serve the same hosts stand as one, level by level, as NVIDIA's topograph merges them:
 * the first by name, with a comment naming the others. Every name problem is one line on
 * problems (NULL: not written): a host without a usable name (left out), a host under leaves
 * that serve different hosts (listed under the first), a switch without a usable name or
 * with another's (named by its GUID). The number of problems, or -1 out of memory. */
struct name_map;
struct slurm_opts {
	const struct name_map *names; /* NULL: none */
	bool yaml;
	const char *topology_name;
};
int topology_slurm(const struct topo *t, const struct slurm_opts *o, FILE *out, FILE *problems);

/* A graphviz graph of the fabric: switches by level (rank=same), hosts below, one edge per
 * link labelled with its width and speed; a link running below what both ends support in
 * red, a link held out of routing (topo_port.unrouted) dashed orange, and the nheld links
 * the SM quarantined (held: the port it disabled at each, whose last_peer is the other end)
 * dashed red. 0, or -1 out of memory. */
int topology_dot(const struct topo *t, const uint32_t *held, uint32_t nheld, FILE *out);

#endif
