/* Fuzz target: the MAD codec (mad/), every SMP and SA attribute ibsmd reads off the wire.
 * First byte: which layout (modulo their number); the rest: the wire bytes. What decodes
 * must encode and decode again to the same wire bytes (the codec neither invents nor loses
 * a field), and nothing may read or write past a buffer whatever the bytes or length. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "mad/cc.h"
#include "mad/mad_header.h"
#include "mad/perf.h"
#include "mad/sa_records.h"
#include "mad/smp_attrs.h"
#include "mad/sync_msg.h"

static const struct mad_layout *const layouts[] = {
    &mad_hdr_layout,
    &mad_rmpp_hdr_layout,
    &mad_sa_hdr_layout,
    &mad_smp_layout,
    &mad_port_counters_layout,
    &mad_port_counters_ext_layout,
    &mad_node_record_layout,
    &mad_port_info_record_layout,
    &mad_switch_info_record_layout,
    &mad_link_record_layout,
    &mad_guid_info_record_layout,
    &mad_pkey_table_record_layout,
    &mad_sl2vl_record_layout,
    &mad_vlarb_record_layout,
    &mad_lft_record_layout,
    &mad_mft_record_layout,
    &mad_sm_info_record_layout,
    &mad_path_record_layout,
    &mad_mcmember_record_layout,
    &mad_service_record_layout,
    &mad_inform_info_layout,
    &mad_inform_info_record_layout,
    &mad_multipath_record_layout,
    &mad_node_info_layout,
    &mad_node_desc_layout,
    &mad_port_info_layout,
    &mad_switch_info_layout,
    &mad_guid_info_layout,
    &mad_pkey_table_layout,
    &mad_sl2vl_table_layout,
    &mad_vlarb_table_layout,
    &mad_lft_block_layout,
    &mad_mft_block_layout,
    &mad_sm_info_layout,
    &mad_notice_layout,
    &mad_class_port_info_layout,
    &mad_sync_req_layout,
    &mad_sync_resp_layout,
    /* congestion control (class 0x21): what an agent answers the CC manager and ibsa cc */
    &mad_cc_info_layout,
    &mad_cc_key_info_layout,
    &mad_cc_switch_setting_layout,
    &mad_cc_ca_setting_layout,
    &mad_cc_table_layout,
};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	const struct mad_layout *l = layouts[data[0] % (sizeof(layouts) / sizeof(layouts[0]))];
	/* the input exactly as long as it is: a decoder must not read past it */
	size_t len = size - 1;
	uint8_t *wire = malloc(len ? len : 1);
	void *a = calloc(1, l->host_size), *b = calloc(1, l->host_size);
	uint8_t *w1 = calloc(1, l->size), *w2 = calloc(1, l->size);
	if (!wire || !a || !b || !w1 || !w2)
		goto out;
	memcpy(wire, data + 1, len);
	struct mad_error err;
	if (mad_layout_decode(l, wire, len, a, &err) < 0)
		goto out;
	/* round trip: encode, decode, encode gives the same bytes */
	if (mad_layout_encode(l, a, w1, l->size, &err) < 0)
		abort(); /* what decoded must encode */
	if (mad_layout_decode(l, w1, l->size, b, &err) < 0)
		abort();
	if (mad_layout_encode(l, b, w2, l->size, &err) < 0 || memcmp(w1, w2, l->size))
		abort();
out:
	free(wire);
	free(a);
	free(b);
	free(w1);
	free(w2);
	return 0;
}
