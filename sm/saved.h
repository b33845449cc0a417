/* The SM's saved items as text lines, each format written and parsed here alone: the mkeys
 * file's "hop" lines (sm/mkeys.c) and the standby sync's items (sync/sync.c: "lid", "mkey",
 * "hop"), so that a file and the sync cannot come to disagree about a line. (The guid2lid
 * and mkeys files' own "GUID VALUE" lines, OpenSM's formats, are sm/lids.c's and
 * sm/mkeys.c's alone.) */
#ifndef IBSMD_SM_SAVED_H
#define IBSMD_SM_SAVED_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

enum sm_saved_kind {
	SM_SAVED_NONE,
	SM_SAVED_LID,
	SM_SAVED_MKEY,
	SM_SAVED_HOP,
	SM_SAVED_PMEMBER,
	SM_SAVED_PARTITION,
};

/* Which kind of item a line is, by its first word (and a space). Each parser below takes
 * only a line of its own kind. */
enum sm_saved_kind sm_saved_kind(const char *line);

/* "lid GUID LID": a port's base LID; _line: into buf (without the newline), its length. */
void sm_saved_put_lid(FILE *f, uint64_t guid, uint16_t lid);
int sm_saved_lid_line(char *buf, size_t len, uint64_t guid, uint16_t lid);
bool sm_saved_parse_lid(const char *line, uint64_t *guid, uint16_t *lid);
/* "mkey GUID KEY": the M_Key a port carries. */
void sm_saved_put_mkey(FILE *f, uint64_t guid, uint64_t key);
bool sm_saved_parse_mkey(const char *line, uint64_t *guid, uint64_t *key);
/* "hop NODE-GUID PORT FAR-GUID": where a node's port leads (M_Key protection level 2). */
void sm_saved_put_hop(FILE *f, uint64_t node_guid, uint8_t port, uint64_t far_guid);
bool sm_saved_parse_hop(const char *line, uint64_t *node_guid, uint8_t *port, uint64_t *far_guid);
/* "pmember PKEY GUID full|limited INDEX0 IPOIB [CLIENT]": a member the run-time partition
 * API added (sm/tenants.h), with its partition's index0 and IPoIB flags (0 or 1) and the
 * client that added it (whose pending GUIDs are counted against api_max_pending; lines
 * written before it was kept have none): the partitions-api file and the sync both. */
#define SM_SAVED_CLIENT_LEN 72
struct sm_saved_pmember {
	uint16_t pkey; /* 15 bits, 0x0001..0x7ffe */
	uint64_t guid;
	uint8_t membership; /* CM_FULL or CM_LIMITED */
	bool index0, ipoib;
	char client[SM_SAVED_CLIENT_LEN]; /* "https:alice", "uid:0"; "" unknown */
};
void sm_saved_put_pmember(FILE *f, const struct sm_saved_pmember *m);
bool sm_saved_parse_pmember(const char *line, struct sm_saved_pmember *m);
/* "apartition PKEY INDEX0 IPOIB MTU RATE SL NAME [CLIENT]": a partition the run-time API
 * defined (UFM's /pkeys/add and qos_conf), members or none: its flags (0 or 1), the cap on
 * its paths' and IPoIB group's MTU and rate (IBA codes; 0 none given), its SL (0-15; 16
 * none given), name ([A-Za-z0-9_.-], 1-63) and the client that defined it. The
 * partitions-api file and the sync both. */
#define SM_SAVED_NAME_LEN 64
#define SM_SAVED_NO_SL    16
struct sm_saved_partition {
	uint16_t pkey; /* 15 bits, 0x0001..0x7ffe */
	bool index0, ipoib;
	uint8_t mtu, rate, sl;
	char name[SM_SAVED_NAME_LEN];
	char client[SM_SAVED_CLIENT_LEN];
};
/* A name that line (and UFM's partition_name) can carry. */
bool sm_saved_name_ok(const char *name);
void sm_saved_put_partition(FILE *f, const struct sm_saved_partition *p);
bool sm_saved_parse_partition(const char *line, struct sm_saved_partition *p);

#endif
