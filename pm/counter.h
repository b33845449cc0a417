/* The counters the performance manager keeps for each port, errors first. */
#ifndef IBSMD_PM_COUNTER_H
#define IBSMD_PM_COUNTER_H

enum pm_counter {
	PM_SYMBOL_ERRORS,
	PM_LINK_ERROR_RECOVERY,
	PM_LINK_DOWNED,
	PM_RCV_ERRORS,
	PM_RCV_REMOTE_PHYS_ERRORS,
	PM_RCV_SWITCH_RELAY_ERRORS,
	PM_XMIT_DISCARDS,
	PM_XMIT_CONSTRAINT_ERRORS,
	PM_RCV_CONSTRAINT_ERRORS,
	PM_LOCAL_LINK_INTEGRITY_ERRORS,
	PM_EXCESSIVE_BUFFER_OVERRUNS,
	PM_VL15_DROPPED,
	PM_NERRORS,                /* the counters above are errors; those below are traffic */
	PM_XMIT_DATA = PM_NERRORS, /* bytes (the wire counts 4-byte words) */
	PM_RCV_DATA,
	PM_XMIT_PKTS,
	PM_RCV_PKTS,
	PM_XMIT_WAIT,
	/* PortCountersExtended only (0 on a node that does not answer it) */
	PM_XMIT_UPKTS,
	PM_RCV_UPKTS,
	PM_XMIT_MPKTS,
	PM_RCV_MPKTS,
	PM_NCOUNTERS
};
const char *pm_counter_name(enum pm_counter c);

#endif
