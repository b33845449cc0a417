/* The SM's saved item lines (sm/saved.h). */
#include "sm/saved.h"

#include <inttypes.h>
#include <string.h>

enum sm_saved_kind sm_saved_kind(const char *line)
{
	if (!strncmp(line, "lid ", 4))
		return SM_SAVED_LID;
	if (!strncmp(line, "mkey ", 5))
		return SM_SAVED_MKEY;
	if (!strncmp(line, "hop ", 4))
		return SM_SAVED_HOP;
	return SM_SAVED_NONE;
}

int sm_saved_lid_line(char *buf, size_t len, uint64_t guid, uint16_t lid)
{
	return snprintf(buf, len, "lid 0x%016" PRIx64 " 0x%04x", guid, lid);
}

void sm_saved_put_lid(FILE *f, uint64_t guid, uint16_t lid)
{
	char line[64];
	sm_saved_lid_line(line, sizeof(line), guid, lid);
	fprintf(f, "%s\n", line);
}

bool sm_saved_parse_lid(const char *line, uint64_t *guid, uint16_t *lid)
{
	unsigned l;
	if (sscanf(line, "lid %" SCNx64 " %x", guid, &l) != 2 || !*guid || !l || l >= 0xc000)
		return false;
	*lid = (uint16_t)l;
	return true;
}

void sm_saved_put_mkey(FILE *f, uint64_t guid, uint64_t key)
{
	fprintf(f, "mkey 0x%016" PRIx64 " 0x%016" PRIx64 "\n", guid, key);
}

bool sm_saved_parse_mkey(const char *line, uint64_t *guid, uint64_t *key)
{
	return sscanf(line, "mkey %" SCNx64 " %" SCNx64, guid, key) == 2 && *guid && *key;
}

void sm_saved_put_hop(FILE *f, uint64_t node_guid, uint8_t port, uint64_t far_guid)
{
	fprintf(f, "hop 0x%016" PRIx64 " %u 0x%016" PRIx64 "\n", node_guid, port, far_guid);
}

bool sm_saved_parse_hop(const char *line, uint64_t *node_guid, uint8_t *port, uint64_t *far_guid)
{
	unsigned p;
	if (sscanf(line, "hop %" SCNx64 " %u %" SCNx64, node_guid, &p, far_guid) != 3 ||
	    !*node_guid || !p || p >= 255 || !*far_guid)
		return false;
	*port = (uint8_t)p;
	return true;
}
