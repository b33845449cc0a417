/* The congestion control manager (IBA Annex A10): after every sweep that ends with the
 * subnet up, it programs the congestion_control settings into every switch
 * (SwitchCongestionSetting) and every CA port in service (CACongestionSetting and the
 * CongestionControlTable), as OpenSM's manager does, with the CC_Key configured. It sends only
 * what a port does not hold yet: a port new to it, a node with a new life (reset), settings
 * changed by a reload. It first reads CongestionInfo (the CCT's size), and leaves alone a
 * port without a CC agent ("unsupported") or that stops answering (a CC_Key other than
 * ours drops Sets silently). Above the SM: it reads the model and sends through the SM's
 * dispatcher, never while the SM sweeps. */
#ifndef IBSMD_CC_CC_H
#define IBSMD_CC_CC_H

#include <stdint.h>

#include "sm/sm.h"

struct ccm_stats {
	uint64_t passes;            /* passes begun (a sweep's end, a reload) */
	uint64_t gets, sets;        /* requests sent */
	uint64_t refused, timeouts; /* answered with an error status; not answered at all */
	uint32_t programmed;        /* ports holding every setting, at the last pass's end */
	uint32_t unavailable;       /* ports left alone: no CC agent, or no answers */
	double last_pass_s;
};

struct ccm;
struct ccm *ccm_new(struct sm *sm);
/* what the SM tells the manager: its sweeps' ends */
struct sm_listener ccm_listener(struct ccm *ccm);
/* the configuration changed (a reload): what differs goes out at the next sweep's end */
void ccm_reconfigure(struct ccm *ccm);
void ccm_stop(struct ccm *ccm);
void ccm_free(struct ccm *ccm);
const struct ccm_stats *ccm_stats(const struct ccm *ccm);

#endif
