/* The SM's saved item lines (sm/saved.h). */
#include "sm/saved.h"

#include <inttypes.h>
#include <string.h>

#include "config/config.h"
#include "mad/link_speed.h"

/* Each kind's first word, the one spelling its writer and its parser both use. */
static const char *const words[] = {[SM_SAVED_LID] = "lid",
                                    [SM_SAVED_MKEY] = "mkey",
                                    [SM_SAVED_HOP] = "hop",
                                    [SM_SAVED_PMEMBER] = "pmember",
                                    [SM_SAVED_PARTITION] = "apartition"};

enum sm_saved_kind sm_saved_kind(const char *line)
{
	for (int k = SM_SAVED_LID; k <= SM_SAVED_PARTITION; k++) {
		size_t n = strlen(words[k]);
		if (!strncmp(line, words[k], n) && line[n] == ' ')
			return (enum sm_saved_kind)k;
	}
	return SM_SAVED_NONE;
}

/* What follows the word of a line of kind k (NULL: the line is not of it). */
static const char *rest_of(const char *line, enum sm_saved_kind k)
{
	return sm_saved_kind(line) == k ? line + strlen(words[k]) + 1 : NULL;
}

int sm_saved_lid_line(char *buf, size_t len, uint64_t guid, uint16_t lid)
{
	return snprintf(buf, len, "%s 0x%016" PRIx64 " 0x%04x", words[SM_SAVED_LID], guid, lid);
}

void sm_saved_put_lid(FILE *f, uint64_t guid, uint16_t lid)
{
	char line[64];
	sm_saved_lid_line(line, sizeof(line), guid, lid);
	fprintf(f, "%s\n", line);
}

bool sm_saved_parse_lid(const char *line, uint64_t *guid, uint16_t *lid)
{
	const char *r = rest_of(line, SM_SAVED_LID);
	unsigned l;
	if (!r || sscanf(r, "%" SCNx64 " %x", guid, &l) != 2 || !*guid || !l || l >= 0xc000)
		return false;
	*lid = (uint16_t)l;
	return true;
}

void sm_saved_put_mkey(FILE *f, uint64_t guid, uint64_t key)
{
	fprintf(f, "%s 0x%016" PRIx64 " 0x%016" PRIx64 "\n", words[SM_SAVED_MKEY], guid, key);
}

bool sm_saved_parse_mkey(const char *line, uint64_t *guid, uint64_t *key)
{
	const char *r = rest_of(line, SM_SAVED_MKEY);
	return r && sscanf(r, "%" SCNx64 " %" SCNx64, guid, key) == 2 && *guid && *key;
}

void sm_saved_put_hop(FILE *f, uint64_t node_guid, uint8_t port, uint64_t far_guid)
{
	fprintf(f, "%s 0x%016" PRIx64 " %u 0x%016" PRIx64 "\n", words[SM_SAVED_HOP], node_guid,
	        port, far_guid);
}

bool sm_saved_parse_hop(const char *line, uint64_t *node_guid, uint8_t *port, uint64_t *far_guid)
{
	const char *r = rest_of(line, SM_SAVED_HOP);
	unsigned p;
	if (!r || sscanf(r, "%" SCNx64 " %u %" SCNx64, node_guid, &p, far_guid) != 3 ||
	    !*node_guid || !p || p >= 255 || !*far_guid)
		return false;
	*port = (uint8_t)p;
	return true;
}

void sm_saved_put_pmember(FILE *f, const struct sm_saved_pmember *m)
{
	fprintf(f, "%s 0x%04x 0x%016" PRIx64 " %s %d %d%s%s\n", words[SM_SAVED_PMEMBER], m->pkey,
	        m->guid, m->membership == CM_LIMITED ? "limited" : "full", m->index0, m->ipoib,
	        m->client[0] ? " " : "", m->client);
}

bool sm_saved_parse_pmember(const char *line, struct sm_saved_pmember *m)
{
	const char *r = rest_of(line, SM_SAVED_PMEMBER);
	unsigned pkey, index0, ipoib;
	char ms[8];
	m->client[0] = 0;
	int n = r ? sscanf(r, "%x %" SCNx64 " %7s %u %u %71s", &pkey, &m->guid, ms, &index0, &ipoib,
	                   m->client)
	          : 0;
	if (n < 5 || !pkey || pkey >= 0x7fff || !m->guid || index0 > 1 || ipoib > 1)
		return false;
	if (!strcmp(ms, "full"))
		m->membership = CM_FULL;
	else if (!strcmp(ms, "limited"))
		m->membership = CM_LIMITED;
	else
		return false;
	m->pkey = (uint16_t)pkey;
	m->index0 = index0;
	m->ipoib = ipoib;
	return true;
}

bool sm_saved_name_ok(const char *name)
{
	size_t n = strlen(name);
	if (!n || n >= SM_SAVED_NAME_LEN)
		return false;
	for (size_t i = 0; i < n; i++) {
		char c = name[i];
		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		      c == '_' || c == '.' || c == '-'))
			return false;
	}
	return true;
}

void sm_saved_put_partition(FILE *f, const struct sm_saved_partition *p)
{
	fprintf(f, "%s 0x%04x %d %d %u %u %u %s%s%s\n", words[SM_SAVED_PARTITION], p->pkey,
	        p->index0, p->ipoib, p->mtu, p->rate, p->sl, p->name, p->client[0] ? " " : "",
	        p->client);
}

bool sm_saved_parse_partition(const char *line, struct sm_saved_partition *p)
{
	const char *r = rest_of(line, SM_SAVED_PARTITION);
	unsigned pkey, index0, ipoib, mtu, rate, sl;
	p->client[0] = 0;
	int n = r ? sscanf(r, "%x %u %u %u %u %u %63s %71s", &pkey, &index0, &ipoib, &mtu, &rate,
	                   &sl, p->name, p->client)
	          : 0;
	if (n < 7 || !pkey || pkey >= 0x7fff || index0 > 1 || ipoib > 1 || mtu > 5 || rate > 255 ||
	    (rate && !mad_rate_mbps((uint8_t)rate)) || sl > SM_SAVED_NO_SL ||
	    !sm_saved_name_ok(p->name))
		return false;
	p->pkey = (uint16_t)pkey;
	p->index0 = index0;
	p->ipoib = ipoib;
	p->mtu = (uint8_t)mtu;
	p->rate = (uint8_t)rate;
	p->sl = (uint8_t)sl;
	return true;
}
