/* Internals shared by the SA's files. */
#ifndef IBSMD_SA_SA_INT_H
#define IBSMD_SA_SA_INT_H

#include "mad/sa_records.h"
#include "sa/sa.h"
#include "sm/sm.h"

struct sa {
	struct sm *sm;
	struct sa_stats st;
};

typedef void (*sa_build_fn)(struct sa *sa, struct sa_records *out);

void sa_build_node_records(struct sa *sa, struct sa_records *out);
void sa_build_port_info_records(struct sa *sa, struct sa_records *out);
void sa_build_link_records(struct sa *sa, struct sa_records *out);
void sa_build_switch_info_records(struct sa *sa, struct sa_records *out);
void sa_build_lft_records(struct sa *sa, struct sa_records *out);
void sa_build_pkey_records(struct sa *sa, struct sa_records *out);
void sa_build_guid_info_records(struct sa *sa, struct sa_records *out);
void sa_build_sm_info_records(struct sa *sa, struct sa_records *out);

/* PathRecords for a request (the request record on the wire and its component mask) into
 * out. Returns 0, or an SA status (insufficient components, invalid GID...). */
uint16_t sa_paths(struct sa *sa, const uint8_t *req, uint64_t mask, bool table,
                  struct sa_records *out);

#endif
