/* The model written out in the formats other InfiniBand tools read: ibnetdiscover's
 * topology, and OpenSM's dump files (opensm-subnet.lst, opensm.fdbs, opensm.mcfdbs,
 * opensm-lfts.dump), so that ibdmchk and ibdiagnet-style tools read ibsmd's fabric and
 * tables as they read OpenSM's. */
#ifndef IBSMD_FABRIC_DUMP_H
#define IBSMD_FABRIC_DUMP_H

#include <stdio.h>

#include "fabric/fabric.h"

/* ibnetdiscover's format (which ibnetdiscover --load-cache-less tools, ibsim and fabricsim
 * load): every present node with its linked ports. */
void topo_dump_ibnetdiscover(const struct topo *t, FILE *out);
/* opensm-subnet.lst: one line per linked port, both ends. */
void topo_dump_subnet_lst(const struct topo *t, FILE *out);
/* opensm.fdbs: each switch's unicast routes, LID by LID, with hops and whether they are
 * the fewest. */
void topo_dump_fdbs(const struct topo *t, FILE *out);
/* opensm.mcfdbs: each switch's multicast forwarding entries. */
void topo_dump_mcfdbs(const struct topo *t, FILE *out);
/* opensm-lfts.dump: each switch's LFT with the destination named (dump_lfts.sh's form,
 * which OpenSM's "file" routing engine loads). */
void topo_dump_lfts(const struct topo *t, FILE *out);
/* The fabric as JSON: [{"guid","type","desc","nports","lid","links":[{"port","port_guid",
 * "lid","peer_guid","peer_port","width","speed","state"}]}] */
void topo_dump_topology_json(const struct topo *t, FILE *out);
/* The same routes as JSON: [{"guid","lid","desc","lft":[[lid,port],...]},...] */
void topo_dump_routes_json(const struct topo *t, FILE *out);

/* The virtual ports, one a line: GUID, LID, state, whether the LID is its own or the
 * port's, physical port, vport index, P_Keys (comma-separated, "-" for none), node
 * description; or (json) an array in the shape of
 * UFM's GET /ufmRest/resources/vports (virtual_port_guid, virtual_port_state,
 * virtual_port_lid, system_ip, system_name, node_description, system_guid, port_guid,
 * port_name, physical_port_number), with vport_index, lid_required and pkeys added. Only
 * the vports of node `node` when it is not TOPO_NONE. */
void topo_dump_vports(const struct topo *t, uint32_t node, bool json, FILE *out);

#endif
