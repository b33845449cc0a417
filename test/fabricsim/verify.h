/* fabricsim verify: reads what the SM programmed and says whether the subnet works. */
#ifndef FABRICSIM_VERIFY_H
#define FABRICSIM_VERIFY_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "fabric.h"

struct verify_opts {
	uint8_t sl;          /* the SL whose VLs the credit-loop check follows; with path_sl,
	                        added to each path's own */
	const char *path_sl; /* the SM's path SL dump (ibsmd-path-sl.dump): each path's SL */
	bool all;            /* credit loops and balance over switch endpoints too (ibdmchk -a);
	                        by default CA-to-CA data traffic, as ibdmchk: switch-to-switch
	                        traffic is management on VL15, which has no credits */
	unsigned max_issues; /* examples kept per report, default 20 */
};

struct verify_report {
	bool ok;
	/* ports: cabled ports with the link up, and how many are ACTIVE */
	unsigned ports_linked, ports_active;
	/* links (counted once) by what they run, and those running slower than both ends could:
	 * below what both enable (the cable, or training), or below what both support because an
	 * end does not enable it; an example of each */
	unsigned links, links_slow, links_disabled_speed;
	char link_rates[256], slow_example[200], disabled_example[200];
	/* endpoints: CA ports with a link, and switch port 0s */
	unsigned endpoints, lids_zero, lids_duplicate, lids_misaligned;
	/* unicast: every endpoint to every LID of every other endpoint */
	uint64_t pairs, pairs_reached, pairs_unreached, pairs_nonminimal;
	/* of the unreachable: those whose route ends at a link that is down (a cable pulled
	 * the SM has not routed around yet), not at a table or a port the SM left wrong */
	uint64_t pairs_unreached_down;
	unsigned hops_max;
	double hops_mean;
	/* credit loops in the channel dependency graph (links x VLs) */
	uint64_t cdg_channels, cdg_edges;
	/* channels (link x VL) that paths use on a VL the link does not run (VL >= its data
	 * VLs, or VL15): the SL-to-VL tables send the SL where its packets are dropped */
	uint64_t vl_unrun;
	bool credit_loop;
	uint16_t sls_used, vls_used; /* bit masks over the paths the credit check followed */
	char cycle[1024];
	/* multicast */
	unsigned mlids, mlids_bad;
	uint64_t mlid_members; /* end ports an MFT tree reaches, over all MLIDs */
	/* balance: routes per switch-to-switch link (directed) */
	uint64_t link_routes_min, link_routes_max;
	double link_routes_mean;
	char worst_link[160];
	/* shift permutations (host i to host i + k): the worst flows of one on a switch link */
	bool shift_checked;
	unsigned shift_hosts, shift_worst, shift_worst_k;
	/* alternate paths (APM), when an endpoint has LMC > 0: pairs of endpoints on different
	 * switches (CA to CA, as the credit check), and the 2^LMC routes from the source's switch
	 * to the destination's LIDs along the LFTs. An alternate is worth having when it shares
	 * no switch-to-switch link with the primary (it survives any one ISL failure), better
	 * still no switch but the two ends' own (it survives a switch failure too) */
	bool apm_checked;
	unsigned apm_lmc; /* the largest LMC among the destinations */
	uint64_t apm_pairs, apm_link_disjoint, apm_switch_disjoint;
	/* ... of those, the pairs whose switches no bridge separates (an alternate apart is
	 * possible), and how many have one */
	uint64_t apm_possible, apm_possible_link_disjoint;
	double apm_routes_mean; /* distinct routes per pair */
	/* the link on every route of the most pairs (their single point of failure), how many;
	 * a pair with no link-disjoint alternate, by its ports' nodes */
	uint64_t apm_spof_pairs;
	char apm_spof_link[160], apm_example[200];
	/* the primary routes alone (each endpoint's base LID), when some LMC > 0: what the
	 * alternates cost them, if anything (an engine that gives its primary routes fewer
	 * virtual layers to leave some to the alternates) */
	uint64_t base_pairs, base_nonminimal, base_link_max;
	double base_hops_mean, base_link_mean;
	/* virtual ports (VFs behind SR-IOV HCA ports): how many, how many ACTIVE, how many with
	 * a LID of their own, and of those the ones some switch does not route to their port */
	unsigned vports, vports_active, vport_lids;
	uint64_t vport_lids_unreached;
	/* examples of what is wrong */
	char **issues;
	unsigned nissues, issues_dropped;
};

void verify_run(const struct fabric *f, const struct verify_opts *o, struct verify_report *r);
void verify_print(const struct verify_report *r, FILE *out);
void verify_print_json(const struct verify_report *r, FILE *out);
void verify_report_free(struct verify_report *r);
/* Each MLID with a bit in a present switch's MFT, and the end ports (port GUIDs, in order)
 * whose attachment bit is set: "0xc001 0x... 0x...", a line each (ctl mcast). */
void verify_print_mcast(const struct fabric *f, FILE *out);

#endif
