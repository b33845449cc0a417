#include "daemon/settings.h"

#include <stdio.h>
#include <string.h>

#include "routing/engine.h"

/* Every engine of the chain must exist: an unknown one is a mistake to stop at before the
 * fabric is touched (or before a reload changes anything). */
static int check_engines(const struct ibsmd_config *cfg, char *err, size_t errlen)
{
	char chain[sizeof(cfg->routing_engines)];
	snprintf(chain, sizeof(chain), "%s", cfg->routing_engines);
	const struct config_where *w = &cfg->where[CK_ROUTING_ENGINE];
	unsigned n = 0;
	for (char *save = NULL, *e = strtok_r(chain, ", ", &save); e;
	     e = strtok_r(NULL, ", ", &save), n++) {
		if (routing_find(e))
			continue;
		if (w->line)
			snprintf(err, errlen,
			         "%s:%u:%u: routing_engine: unknown engine \"%s\" (known: %s)",
			         cfg->source, w->line, w->col, e, routing_names());
		else
			snprintf(err, errlen, "unknown routing engine \"%s\" (known: %s)", e,
			         routing_names());
		return -1;
	}
	if (!n) {
		if (w->line)
			snprintf(err, errlen,
			         "%s:%u:%u: routing_engine: empty; name one or more engines (%s)",
			         cfg->source, w->line, w->col, routing_names());
		else
			snprintf(err, errlen,
			         "--routing-engine: empty; name one or more engines (%s)",
			         routing_names());
		return -1;
	}
	return 0;
}

int settings_load(const struct settings *s, struct ibsmd_config *cfg, char *err, size_t errlen)
{
	config_defaults(cfg);
	if (s->config_file && config_load(cfg, s->config_file, err, errlen) < 0)
		return -1;
	if (s->state_dir) {
		snprintf(cfg->state_dir, sizeof(cfg->state_dir), "%s", s->state_dir);
		cfg->where[CK_STATE_DIR] = (struct config_where){0, 0};
	}
	if (s->control_socket) {
		snprintf(cfg->control_socket, sizeof(cfg->control_socket), "%s", s->control_socket);
		cfg->where[CK_CONTROL_SOCKET] = (struct config_where){0, 0};
	}
	if (s->engines) {
		snprintf(cfg->routing_engines, sizeof(cfg->routing_engines), "%s", s->engines);
		cfg->where[CK_ROUTING_ENGINE] = (struct config_where){0, 0};
	}
	if (s->lmc >= 0) {
		cfg->lmc = (uint8_t)s->lmc;
		cfg->where[CK_LMC] = (struct config_where){0, 0};
	}
	if (s->sweep_interval >= 0) {
		cfg->sweep_interval_s = (unsigned)s->sweep_interval;
		cfg->where[CK_SWEEP_INTERVAL] = (struct config_where){0, 0};
	}
	if (s->priority >= 0) {
		cfg->sm_priority = (uint8_t)s->priority;
		cfg->where[CK_SM_PRIORITY] = (struct config_where){0, 0};
	}
	if (s->log_level >= 0) {
		cfg->log_level = s->log_level;
		cfg->where[CK_LOG_LEVEL] = (struct config_where){0, 0};
	}
	if (config_check(cfg, err, errlen) < 0 || check_engines(cfg, err, errlen) < 0)
		return -1;
	return 0;
}
