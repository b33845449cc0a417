/* The agents every simulated node runs: the SMA (subnet management agent) and the PMA
 * (performance management agent), and the packet paths that bring MADs to them. */
#ifndef FABRICSIM_AGENTS_H
#define FABRICSIM_AGENTS_H

#include <stdbool.h>
#include <stdint.h>

#include "fabric.h"

enum agent_result {
	AGENT_REPLY,    /* the MAD now holds the response */
	AGENT_NO_REPLY, /* nothing to send back (TrapRepress, M_Key violation) */
	AGENT_NOT_MINE, /* not for the SMA (SMInfo): forward to the SM attached there */
};

/* An SMP delivered to node's SMA, having entered the node through port `in` (a port index;
 * switch port 0 for a local sender). now_ns drives the M_Key lease. */
enum agent_result sma_process(struct fabric *f, uint32_t in, uint8_t *mad, uint64_t now_ns);
/* A PerfMgt GMP (PortCounters, ClassPortInfo) delivered to the node owning port `in`. */
enum agent_result pma_process(struct fabric *f, uint32_t in, uint8_t *mad);

/* A Congestion Control GMP delivered to a management port (switch port 0, or a CA port). */
enum agent_result cca_process(struct fabric *f, uint32_t mgmt, uint8_t *mad);

/* Raw NodeInfo / PortInfo as an SMA would return them, for the simulator protocol's
 * GET_NODEINFO and GET_PORTINFO (64 bytes each). */
void sma_node_info_raw(const struct fabric *f, uint32_t port, uint8_t out[64]);
/* ext: as to an SM that set SMSupportExtendedSpeeds (else NDR and XDR stay hidden) */
void sma_port_info_raw(const struct fabric *f, uint32_t port, uint32_t arrival, bool ext,
                       uint8_t out[64]);

/* Build a trap (Notice) from the node owning `port` to its MasterSMLID. */
void sma_build_trap(const struct fabric *f, uint32_t port, uint16_t trap, uint64_t tid,
                    uint8_t mad[256]);

/* ---- packet paths ---- */

struct route {
	uint32_t arrival; /* port the MAD entered the destination node on */
	uint32_t dest;    /* the destination's management port: switch port 0, or `arrival` */
	unsigned hops;
	const char *why; /* why it was dropped */
	bool lost;       /* dropped by fault injection: silently, as a bad link would */
};

/* A directed-route SMP leaving from port src (the sender's port), outbound or on its return
 * path by its D bit; hop pointer and return path are updated in the MAD as hardware does.
 * 0 delivered, -1 dropped (r->why). */
int route_dr(struct fabric *f, uint32_t src, uint8_t *mad, struct route *r);
/* A LID-routed packet from port src to dlid through the LFTs; SMPs (VL15) cross links in
 * INIT or better, everything else needs ACTIVE ports. */
int route_lid(struct fabric *f, uint32_t src, uint16_t dlid, bool vl15, struct route *r);

/* An SMP sent from port sm_port (to dlid when LID-routed) carried to the SMA it is for and
 * its answer back, as the fabric would, without a server (in-process tests, the fuzzer):
 * true with the answer in mad and in *src the LID it comes from (0xffff: directed route). */
bool sma_exchange(struct fabric *f, uint32_t sm_port, uint16_t dlid, uint8_t *mad, uint16_t *src);

#endif
