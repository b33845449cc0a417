/* Options a reload takes are moved into the configuration the daemon runs with; the SM then
 * rediscovers the fabric, so new partitions reach the P_Key tables, a new engine or root
 * set routes it, and new IPoIB groups appear, all within one sweep; a change of the ports'
 * PortInfo settings alone (buffers, link settings) is set on the ports without a sweep. Options
 * that shape what the subnet already holds (LMC, LID range, subnet prefix, keys, state directory)
 * would change it under running hosts, so they wait for a restart, which says so in the log. */
#include "daemon/reload.h"

#include <string.h>

#include "daemon/metrics.h"
#include "pm/pm.h"

enum log_level reload_log_level(const struct ibsmd_config *cfg, int verbose)
{
	int l = cfg->log_level >= 0 ? cfg->log_level : LOGL_NOTICE;
	for (; verbose > 0 && l < LOGL_DEBUG; verbose--)
		l++;
	return (enum log_level)l;
}

void reload_names(struct reload *r)
{
	if (!r->cfg->node_name_map[0]) {
		name_map_free(&r->names);
		return;
	}
	struct name_map fresh;
	char why[400];
	if (name_map_read(&fresh, r->cfg->node_name_map, why, sizeof(why)) < 0) {
		log_err(r->log, "config", "node_name_map %s; %s", why,
		        r->names.n ? "the names read before stay"
		                   : "nodes go by their NodeDescriptions");
		return;
	}
	name_map_free(&r->names);
	r->names = fresh;
	log_notice(r->log, "config", "node_name_map %s: %u names", r->cfg->node_name_map, fresh.n);
}

int reload_apply(struct reload *r)
{
	const char *file = r->settings->config_file ? r->settings->config_file : "(no file)";
	notify_reloading(r->notify, false);
	struct ibsmd_config *fresh = malloc(sizeof(*fresh));
	char err[512];
	if (!fresh) {
		log_err(r->log, "config", "reload of %s: out of memory; nothing changed", file);
		notify_reloading(r->notify, true);
		return -1;
	}
	if (settings_load(r->settings, fresh, err, sizeof(err)) < 0) {
		log_err(
		    r->log, "config",
		    "reload refused, the daemon keeps running with the configuration it had: %s",
		    err);
		config_free(fresh);
		free(fresh);
		notify_reloading(r->notify, true);
		return -1;
	}
	/* the routing thread reads the configuration the loop is about to change */
	sm_routing_wait(r->sm);
	unsigned live = 0, waiting = 0, port_only = 0;
	char changed[512] = "";
	size_t at = 0;
	for (unsigned k = 0; k < CONFIG_NKEYS; k++) {
		if (config_key_equal(r->cfg, fresh, (enum config_key)k))
			continue;
		const char *name = config_key_name((enum config_key)k);
		if (!config_key_live((enum config_key)k)) {
			log_warn(
			    r->log, "config",
			    "reload: %s changed in %s, but takes a restart of ibsmd (it shapes "
			    "what the subnet holds); the running value stays",
			    name, file);
			waiting++;
			continue;
		}
		config_key_take(r->cfg, fresh, (enum config_key)k);
		port_only += config_key_port_only((enum config_key)k);
		if (at < sizeof(changed))
			at += (size_t)snprintf(changed + at, sizeof(changed) - at, "%s%s",
			                       live ? ", " : "", name);
		live++;
	}
	snprintf(r->cfg->source, sizeof(r->cfg->source), "%s", fresh->source);
	config_free(fresh);
	free(fresh);
	reload_names(r);
	r->log->level = reload_log_level(r->cfg, r->verbose);
	if (live && port_only == live) {
		/* buffers and link settings: the ports that differ get a PortInfo Set, and
		 * nothing is rediscovered or rerouted */
		log_notice(r->log, "config", "reload of %s: %s changed; set on the ports now%s",
		           file, changed, waiting ? " (others wait for a restart)" : "");
		sync_config_changed(r->sync);
		sm_ports_changed(r->sm);
	} else if (live) {
		log_notice(r->log, "config",
		           "reload of %s: %s changed; applied by a full sweep now%s", file, changed,
		           waiting ? " (others wait for a restart)" : "");
		sync_config_changed(r->sync);
		if (r->metrics)
			metrics_reconfigure(r->metrics);
		pm_reconfigure(r->pm);
		sm_config_changed(r->sm);
	} else if (sm_routing_inputs_changed(r->sm)) {
		log_notice(r->log, "config",
		           "reload of %s: a routing input file changed; routes computed afresh now",
		           file);
		sm_config_changed(r->sm);
	} else {
		log_notice(r->log, "config", "reload of %s: nothing to apply%s", file,
		           waiting ? " (changes wait for a restart)" : "");
	}
	notify_reloading(r->notify, true);
	return 0;
}
