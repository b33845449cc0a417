/* OpenSM's hop_weights_file for min-hop: leaving a switch by a listed port costs its weight
 * instead of one hop, so that min-hop routes around links a site wants used less (a slower
 * cable, an inter-rack link) while paths of equal cost stay balanced as before. */
#ifndef IBSMD_ROUTING_HOP_WEIGHTS_H
#define IBSMD_ROUTING_HOP_WEIGHTS_H

#include "routing/engine.h"

/* Every switch's cost to every switch (cost[s * nsw + t], RT_INF: no way), and each edge's
 * weight (per adj index). */
struct hop_costs {
	uint16_t *cost;
	uint8_t *w;
};

/* From ctx->cfg->hop_weights_file: 0 with hc filled; 1 (hc empty) when no file is set, or
 * when it cannot be read or a line of it is wrong (logged with the file and line: routes
 * then go without weights); -1 out of memory (ctx->why). Lines naming a switch or port the
 * fabric does not have are skipped and counted in the log, as OpenSM skips them. */
int hop_costs_build(struct routing_ctx *ctx, struct hop_costs *hc);
void hop_costs_free(struct hop_costs *hc);

#endif
