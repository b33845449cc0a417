/* The performance management agent: PortCounters of the MADs that really crossed each port
 * (IBA 16.1.3.5), and ClassPortInfo. Layouts from libibmad's PortCounters fields. */
#include <string.h>

#include <infiniband/mad.h>

#include "agents.h"
#include "mad/mad_header.h"
#include "mad/mad_types.h"

static uint32_t sat32(uint64_t v)
{
	return v > 0xffffffffull ? 0xffffffffu : (uint32_t)v;
}

static void add_counters(struct fs_counters *sum, const struct fs_counters *c)
{
	sum->xmit_pkts += c->xmit_pkts;
	sum->rcv_pkts += c->rcv_pkts;
	sum->xmit_data += c->xmit_data;
	sum->rcv_data += c->rcv_data;
	sum->link_downed = (uint16_t)(sum->link_downed + c->link_downed);
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
	} else if (attr == MAD_ATTR_PORT_COUNTERS &&
	           (method == MAD_METHOD_GET || method == MAD_METHOD_SET)) {
		unsigned sel = mad_get_field(data, 0, IB_PC_PORT_SELECT_F);
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
				if (method == MAD_METHOD_SET) /* Set clears the selected counters */
					memset(&f->ports[p].cnt, 0, sizeof(f->ports[p].cnt));
				add_counters(&c, &f->ports[p].cnt);
			}
		}
		memset(data, 0, IB_PC_DATA_SZ);
		mad_set_field(data, 0, IB_PC_PORT_SELECT_F, sel);
		mad_set_field(data, 0, IB_PC_COUNTER_SELECT_F, 0xffff);
		mad_set_field(data, 0, IB_PC_LINK_DOWNED_F,
		              c.link_downed > 255 ? 255 : c.link_downed);
		mad_set_field(data, 0, IB_PC_XMT_BYTES_F, sat32(c.xmit_data));
		mad_set_field(data, 0, IB_PC_RCV_BYTES_F, sat32(c.rcv_data));
		mad_set_field(data, 0, IB_PC_XMT_PKTS_F, sat32(c.xmit_pkts));
		mad_set_field(data, 0, IB_PC_RCV_PKTS_F, sat32(c.rcv_pkts));
	} else if (attr == MAD_ATTR_PORT_COUNTERS || attr == MAD_ATTR_CLASS_PORT_INFO) {
		st = MAD_STATUS_UNSUP_METHOD;
	} else {
		st = MAD_STATUS_UNSUP_METHOD_ATTR;
	}
	mad[3] = MAD_METHOD_GET_RESP;
	mad_set_field(mad, 0, IB_MAD_STATUS_F, st);
	return AGENT_REPLY;
}
