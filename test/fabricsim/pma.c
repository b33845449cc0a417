/* The performance management agent: PortCounters of the MADs that really crossed each port
 * (IBA 16.1.3.5), the error counters that "ctl errors" raises, PortCountersExtended, and
 * ClassPortInfo. Layouts from libibmad's PortCounters fields. */
#include <string.h>

#include <infiniband/mad.h>

#include "agents.h"
#include "mad/mad_header.h"
#include "mad/mad_types.h"
#include "mad/perf.h"

static uint64_t sat(uint64_t v, uint64_t max)
{
	return v > max ? max : v;
}

static void add_counters(struct fs_counters *sum, const struct fs_counters *c)
{
	sum->xmit_pkts += c->xmit_pkts;
	sum->rcv_pkts += c->rcv_pkts;
	sum->xmit_data += c->xmit_data;
	sum->rcv_data += c->rcv_data;
	sum->link_downed += c->link_downed;
	sum->symbol_errors += c->symbol_errors;
	sum->link_error_recovery += c->link_error_recovery;
	sum->rcv_errors += c->rcv_errors;
	sum->rcv_remote_phys_errors += c->rcv_remote_phys_errors;
	sum->rcv_switch_relay_errors += c->rcv_switch_relay_errors;
	sum->xmit_discards += c->xmit_discards;
	sum->xmit_constraint_errors += c->xmit_constraint_errors;
	sum->rcv_constraint_errors += c->rcv_constraint_errors;
	sum->local_link_integrity_errors += c->local_link_integrity_errors;
	sum->excessive_buffer_overruns += c->excessive_buffer_overruns;
	sum->vl15_dropped += c->vl15_dropped;
	sum->xmit_wait += c->xmit_wait;
}

/* PortCounters Set: clear the counters whose CounterSelect bits are set (IBA 16.1.3.5) */
static void clear_selected(struct fs_counters *c, unsigned sel)
{
	uint64_t *bits[] = {&c->symbol_errors,
	                    &c->link_error_recovery,
	                    &c->link_downed,
	                    &c->rcv_errors,
	                    &c->rcv_remote_phys_errors,
	                    &c->rcv_switch_relay_errors,
	                    &c->xmit_discards,
	                    &c->xmit_constraint_errors,
	                    &c->rcv_constraint_errors,
	                    &c->local_link_integrity_errors,
	                    &c->excessive_buffer_overruns,
	                    &c->vl15_dropped,
	                    &c->xmit_data,
	                    &c->rcv_data,
	                    &c->xmit_pkts,
	                    &c->rcv_pkts};
	for (unsigned i = 0; i < 16; i++)
		if (sel >> i & 1)
			*bits[i] = 0;
}

enum agent_result pma_process(struct fabric *f, uint32_t in, uint8_t *mad)
{
	uint8_t method = mad[3];
	uint16_t attr = (uint16_t)mad_get_field(mad, 0, IB_MAD_ATTRID_F);
	uint8_t *data = mad + IB_PC_DATA_OFFS;
	uint16_t st = MAD_STATUS_OK;
	if (mad_is_response(method))
		return AGENT_NO_REPLY;
	const struct fs_node *n = fs_node_of(f, in);

	if (attr == MAD_ATTR_CLASS_PORT_INFO && method == MAD_METHOD_GET) {
		memset(data, 0, IB_PC_DATA_SZ);
		mad_set_field(data, 0, IB_CPI_BASEVER_F, 1);
		mad_set_field(data, 0, IB_CPI_CLASSVER_F, 1);
		mad_set_field(data, 0, IB_CPI_RESP_TIME_VALUE_F, 18);
		/* PortCountersExtended answered (IBA 16.1.2, CapabilityMask bit 9) */
		mad_set_field(data, 0, IB_CPI_CAPMASK_F, MAD_PERF_CPI_EXT_SPEEDS);
	} else if ((attr == MAD_ATTR_PORT_COUNTERS || attr == MAD_ATTR_PORT_COUNTERS_EXT) &&
	           (method == MAD_METHOD_GET || method == MAD_METHOD_SET)) {
		bool ext = attr == MAD_ATTR_PORT_COUNTERS_EXT;
		unsigned sel =
		    mad_get_field(data, 0, ext ? IB_PC_EXT_PORT_SELECT_F : IB_PC_PORT_SELECT_F);
		unsigned csel = mad_get_field(
		    data, 0, ext ? IB_PC_EXT_COUNTER_SELECT_F : IB_PC_COUNTER_SELECT_F);
		struct fs_counters c = {0};
		bool all = sel == 0xff;
		unsigned first = n->type == NODE_TYPE_SWITCH ? 0 : 1;
		if (!all && (sel > n->nports || (sel == 0 && first == 1))) {
			st = MAD_STATUS_INVALID_FIELD;
		} else {
			for (unsigned num = first; num <= n->nports; num++) {
				if (!all && num != sel)
					continue;
				uint32_t p = fabric_port(f, f->ports[in].node, num);
				if (method == MAD_METHOD_SET &&
				    ext) /* the data counters, bits 0-3 */
					clear_selected(&f->ports[p].cnt, (csel & 0xf) << 12);
				else if (method == MAD_METHOD_SET)
					clear_selected(&f->ports[p].cnt, csel);
				add_counters(&c, &f->ports[p].cnt);
			}
		}
		memset(data, 0, IB_PC_DATA_SZ);
		if (ext) {
			mad_set_field(data, 0, IB_PC_EXT_PORT_SELECT_F, sel);
			mad_set_field(data, 0, IB_PC_EXT_COUNTER_SELECT_F, csel);
			mad_set_field64(data, 0, IB_PC_EXT_XMT_BYTES_F, c.xmit_data);
			mad_set_field64(data, 0, IB_PC_EXT_RCV_BYTES_F, c.rcv_data);
			mad_set_field64(data, 0, IB_PC_EXT_XMT_PKTS_F, c.xmit_pkts);
			mad_set_field64(data, 0, IB_PC_EXT_RCV_PKTS_F, c.rcv_pkts);
		} else {
			mad_set_field(data, 0, IB_PC_PORT_SELECT_F, sel);
			mad_set_field(data, 0, IB_PC_COUNTER_SELECT_F, csel);
			mad_set_field(data, 0, IB_PC_ERR_SYM_F,
			              (uint32_t)sat(c.symbol_errors, 0xffff));
			mad_set_field(data, 0, IB_PC_LINK_RECOVERS_F,
			              (uint32_t)sat(c.link_error_recovery, 0xff));
			mad_set_field(data, 0, IB_PC_LINK_DOWNED_F,
			              (uint32_t)sat(c.link_downed, 0xff));
			mad_set_field(data, 0, IB_PC_ERR_RCV_F,
			              (uint32_t)sat(c.rcv_errors, 0xffff));
			mad_set_field(data, 0, IB_PC_ERR_PHYSRCV_F,
			              (uint32_t)sat(c.rcv_remote_phys_errors, 0xffff));
			mad_set_field(data, 0, IB_PC_ERR_SWITCH_REL_F,
			              (uint32_t)sat(c.rcv_switch_relay_errors, 0xffff));
			mad_set_field(data, 0, IB_PC_XMT_DISCARDS_F,
			              (uint32_t)sat(c.xmit_discards, 0xffff));
			mad_set_field(data, 0, IB_PC_ERR_XMTCONSTR_F,
			              (uint32_t)sat(c.xmit_constraint_errors, 0xff));
			mad_set_field(data, 0, IB_PC_ERR_RCVCONSTR_F,
			              (uint32_t)sat(c.rcv_constraint_errors, 0xff));
			mad_set_field(data, 0, IB_PC_ERR_LOCALINTEG_F,
			              (uint32_t)sat(c.local_link_integrity_errors, 0xf));
			mad_set_field(data, 0, IB_PC_ERR_EXCESS_OVR_F,
			              (uint32_t)sat(c.excessive_buffer_overruns, 0xf));
			mad_set_field(data, 0, IB_PC_VL15_DROPPED_F,
			              (uint32_t)sat(c.vl15_dropped, 0xffff));
			mad_set_field(data, 0, IB_PC_XMT_BYTES_F,
			              (uint32_t)sat(c.xmit_data, 0xffffffff));
			mad_set_field(data, 0, IB_PC_RCV_BYTES_F,
			              (uint32_t)sat(c.rcv_data, 0xffffffff));
			mad_set_field(data, 0, IB_PC_XMT_PKTS_F,
			              (uint32_t)sat(c.xmit_pkts, 0xffffffff));
			mad_set_field(data, 0, IB_PC_RCV_PKTS_F,
			              (uint32_t)sat(c.rcv_pkts, 0xffffffff));
			mad_set_field(data, 0, IB_PC_XMT_WAIT_F,
			              (uint32_t)sat(c.xmit_wait, 0xffffffff));
		}
	} else if (attr == MAD_ATTR_PORT_COUNTERS || attr == MAD_ATTR_PORT_COUNTERS_EXT ||
	           attr == MAD_ATTR_CLASS_PORT_INFO) {
		st = MAD_STATUS_UNSUP_METHOD;
	} else {
		st = MAD_STATUS_UNSUP_METHOD_ATTR;
	}
	mad[3] = MAD_METHOD_GET_RESP;
	mad_set_field(mad, 0, IB_MAD_STATUS_F, st);
	return AGENT_REPLY;
}
