/* What ibsmd does about each OpenSM 3.3.23 option that has no ibsmd.yaml key of its own (see
 * opensm_fates.h). Each line says what happens on the fabric, so that a site reading the
 * import knows what it keeps and what it loses; "default" is OpenSM's (what `opensm -c`
 * writes), and `other` is said, and warned about, only when the site changed it. */
#include "import/opensm_fates.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static const struct opensm_fate fates[] = {
    /* the SM's own port, logs, daemon */
    {"guid", NULL, "the port is chosen with --ca/--port, --guid or --local-port", NULL},
    {"log_file", NULL, "ibsmd logs to standard error or, with --journal, to the journal", NULL},
    {"log_flags", NULL, "see log_level", NULL},
    {"force_log_flush", NULL, "lines are written whole as they happen", NULL},
    {"log_max_size", NULL, "the journal rotates its own files", NULL},
    {"accum_log_file", NULL, "the journal keeps the log across restarts", NULL},
    {"per_module_logging_file", NULL,
     "ibsmd has one log_level; each line names its subsystem, which journalctl filters on", NULL},
    {"daemon", NULL, "systemd runs ibsmd (ibsmd.service)", NULL},
    {"single_thread", NULL, "ibsmd runs one event loop (routing on a thread of its own)", NULL},
    {"exit_on_fatal", NULL, "ibsmd keeps running and logs what went wrong", NULL},
    {"cache_options", NULL, "ibsmd writes no options cache", NULL},
    {"fsync_high_avail_files", "TRUE",
     "ibsmd always writes its state files whole and synced (temporary file, fsync, rename)",
     "ibsmd always syncs its state files; there is no turning that off"},
    {"console", NULL,
     "ibsa on the control socket: status, sweep, reroute, loglevel, dump, counters, and "
     "OpenSM's querylid, portstatus, switchbalance, lidbalance, priority, update-desc",
     NULL},
    {"console_port", NULL, "ibsa on the control socket (control_socket, control_group)", NULL},
    {"event_plugin_name", NULL,
     "events go to the journal (IBSMD_EVENT=) and, as JSON lines, to `ibsa watch --follow`, "
     "which a site's script reads instead of a plug-in",
     NULL},
    {"event_plugin_options", NULL, "see event_plugin_name", NULL},
    {"dump_files_dir", NULL, "see dump_dir", NULL},
    {"lid_matrix_dump_file", NULL, "ibsa dump routes; dump_dir and dump_after_sweep", NULL},
    {"sa_db_dump", "FALSE",
     "ibsmd always keeps the SA's clients (groups, services, subscriptions) in "
     "state_dir/sa-state and brings them back at start",
     "ibsmd always keeps the SA's clients in state_dir/sa-state; no other dump is written"},
    /* the election, sweeps, MADs */
    {"sm_inactive", "FALSE", "ibsmd takes part in the election (ignore_other_sm to override)",
     "ibsmd has no inactive mode: it takes part in the election (ignore_other_sm overrides)"},
    {"sm_sl", "0", "ibsmd's SM and SA talk on SL 0 (PortInfo MasterSMSL 0), as this setting",
     "ibsmd's SM and SA talk on SL 0 (PortInfo MasterSMSL 0): give that SL a VL on every link"},
    {"max_wire_smps2", NULL, "ibsmd keeps mad_window in flight, and mad_window_per_node per node",
     NULL},
    {"max_smps_timeout", NULL, "ibsmd keeps mad_window in flight, and mad_window_per_node per node",
     NULL},
    {"long_transaction_timeout", NULL,
     "ibsmd times an SA transfer (RMPP) out per segment, at mad_timeout_ms", NULL},
    {"max_msg_fifo_timeout", NULL,
     "ibsmd queues at most mad_queue_max MADs, each for as long as "
     "mad_timeout_ms and mad_retries allow",
     NULL},
    {"randomize_sminfo_polls", NULL, "not needed: one master polls, standbys wait", NULL},
    {"force_heavy_sweep", "FALSE",
     "ibsmd sweeps lightly and explores what changed; ibsa sweep heavy forces a full one",
     "ibsmd sweeps lightly and explores what changed; run ibsa sweep heavy when one is wanted"},
    {"sweep_on_trap", "TRUE",
     "ibsmd follows the traps that say the fabric changed: 128 (a link) sweeps, 144 "
     "re-reads the port's SM capability, 1146 its virtual ports",
     "ibsmd always follows the traps that say the fabric changed"},
    {"reassign_lids", "FALSE",
     "ibsmd keeps every port's LID (guid2lid in state_dir); delete it to start afresh",
     "ibsmd keeps every port's LID (guid2lid in state_dir): delete that file before the first "
     "start to have LIDs given afresh"},
    {"honor_guid2lid_file", NULL, "ibsmd always honors its guid2lid file", NULL},
    {"sm_assigned_guid", "0x00",
     "ibsmd gives no alias GUIDs of its own; hosts set theirs (GUIDInfoRecord)",
     "ibsmd gives no alias GUIDs of its own; hosts set theirs (GUIDInfoRecord)"},
    {"enable_quirks", "FALSE", "ibsmd applies no vendor quirks, as with FALSE",
     "ibsmd applies no vendor quirks: a device that needs one shows as an error in the log"},
    {"babbling_port_policy", NULL,
     "ibsmd quarantines a babbling or flapping port by default (trap_flood_threshold, "
     "link_flap_threshold; 0 turns either off)",
     NULL},
    {"no_clients_rereg", "FALSE",
     "ibsmd asks the clients to register again (ClientReregister) when it takes over",
     "ibsmd always asks the clients to register again when it takes over; they keep their "
     "SA state that way"},
    /* keys */
    {"m_key_lookup", "TRUE",
     "ibsmd keeps each port's M_Key (state_dir/mkeys, derived from m_key_secret when set) and "
     "presents it by port GUID",
     "ibsmd always keeps each port's M_Key and presents it by port GUID"},
    {"sa_key", NULL,
     "ibsmd's SA trusts requests that carry sm_key: give trusted SA clients that key", NULL},
    /* ports and links */
    {"max_op_vls", "5", "ibsmd runs every VL both ends of a link have (OperVLs), as 5 does",
     "ibsmd runs every VL both ends of a link have; hold the routing engines to fewer with "
     "routing_max_vls"},
    {"fdr10", "1", "ibsmd sends no ExtendedPortInfo: FDR10 stays as each port has it (on)",
     "ibsmd sends no ExtendedPortInfo: FDR10 stays as each port has it"},
    {"local_phy_errors_threshold", "0x08",
     "ibsmd leaves PortInfo LocalPhyErrors as the ports hold it (8 on most)",
     "ibsmd leaves PortInfo LocalPhyErrors as the ports hold it"},
    {"overrun_errors_threshold", "0x08",
     "ibsmd leaves PortInfo OverrunErrors as the ports hold it (8 on most)",
     "ibsmd leaves PortInfo OverrunErrors as the ports hold it"},
    {"use_mfttop", "TRUE", "ibsmd sends the multicast blocks in use only", NULL},
    {"use_optimized_slvl", "FALSE", "ibsmd sends each port's SL-to-VL tables where they differ",
     NULL},
    {"suppress_sl2vl_mad_status_errors", "FALSE",
     "ibsmd logs a refused SL-to-VL Set (rate limited) and goes on", NULL},
    {"keep_pkey_indexes", "TRUE",
     "ibsmd keeps each P_Key at the index the port holds it (a hole where a key left, a new "
     "key in the first free index), across restarts and takeovers",
     "ibsmd always keeps P_Key indexes: a port's table is not compacted when a partition "
     "leaves it"},
    {"no_partition_enforcement", NULL, "ibsmd enforces partitions at the switch ports facing hosts",
     NULL},
    {"part_enforce", NULL, "ibsmd enforces partitions both ways at the switch ports facing hosts",
     NULL},
    /* routing */
    {"use_ucast_cache", NULL, "ibsmd re-examines only the switches that reported a change", NULL},
    {"connect_roots", NULL, "not needed: updn reaches every switch", NULL},
    {"port_profile_switch_nodes", "FALSE",
     "ibsmd's engines balance the routes to hosts' LIDs; switches' LIDs ride along", NULL},
    {"port_search_ordering_file", "(null)",
     "ibsmd's dor finds the dimensions from the port pairs the links use, the same on every "
     "switch; a switch cabled otherwise is named with its port, and the chain's next engine "
     "routes",
     NULL},
    {"avoid_throttled_links", "FALSE", "ibsmd routes over every link that is up", NULL},
    {"quasi_ftree_indexing", "FALSE", "ibsmd's ftree ranks the switches from the cabling", NULL},
    {"max_reverse_hops", "0",
     "ibsmd's ftree turns down-up only where up/down leaves a pair without a route (I/O nodes "
     "off switches that are not leaves), by the shortest path, with no budget to set",
     NULL},
    {"io_guid_file", "(null)",
     "ibsmd's ftree reaches every I/O node without it (cn_guid_file makes the leaves); dfsssp "
     "balances I/O and compute nodes alike",
     NULL},
    {"do_mesh_analysis", "FALSE",
     "ibsmd's lash lays paths on layers as they come, with no mesh analysis", NULL},
    {"lash_start_vl", "0", "ibsmd's lash (and dfsssp, nue) start their layers at VL 0", NULL},
    {"nue_include_switches", "FALSE", "ibsmd's nue routes to the switches' LIDs as to any", NULL},
    /* SA and multicast */
    {"drop_event_subscriptions", "FALSE",
     "ibsmd keeps the subscriptions (state_dir/sa-state) across restarts and failovers", NULL},
    {"ipoib_mcgroup_creation_validation", "TRUE",
     "ibsmd checks every IPoIB group's creation against its partition's", NULL},
    {"mcgroup_join_validation", "TRUE", "ibsmd checks every join against the group (IBA 15.2.5.17)",
     NULL},
    {"use_original_extended_sa_rates_only", "FALSE",
     "ibsmd's SA answers every rate code, the extended ones too", NULL},
    {"consolidate_ipv6_snm_req", "FALSE",
     "ibsmd keeps a group per IPv6 solicited-node address, as FALSE does", NULL},
    {"disable_multicast", "FALSE", "ibsmd runs multicast (its SA groups and the switches' MFTs)",
     NULL},
    /* the performance manager (pm_interval, pm_threshold_*) */
    {"perfmgr_redir", "TRUE", "ibsmd's PM reads each port where it answers", NULL},
    {"perfmgr_max_outstanding_queries", NULL, "see pm_window", NULL},
    {"perfmgr_rm_nodes", "TRUE", "ibsmd's PM reads the ports the fabric has now", NULL},
    {"perfmgr_log_errors", "TRUE",
     "ibsmd's PM logs a port whose error counter grows past pm_threshold_*", NULL},
    {"perfmgr_query_cpi", "TRUE", "ibsmd's PM asks for the extended counters where a node has them",
     NULL},
};

bool opensm_same_value(const char *a, const char *b)
{
	char *ea, *eb;
	unsigned long long x = strtoull(a, &ea, 0), y = strtoull(b, &eb, 0);
	if (ea != a && !*ea && eb != b && !*eb)
		return x == y;
	return !strcasecmp(a, b);
}

const struct opensm_fate *opensm_fate_of(const char *key)
{
	for (size_t i = 0; i < sizeof(fates) / sizeof(fates[0]); i++)
		if (!strcmp(fates[i].osm, key))
			return &fates[i];
	return NULL;
}

const char *opensm_fate_text(const struct opensm_fate *f, const char *val, bool *changed)
{
	*changed = f->dflt && !opensm_same_value(val, f->dflt);
	return *changed && f->other ? f->other : f->same;
}
