/* The OpenSM options ibsmd.yaml has no key for, and what ibsmd does about each: the
 * importer writes that as a comment beside the option, and warns where a site's value asks
 * for something ibsmd does not do. */
#ifndef IBSMD_IMPORT_OPENSM_FATES_H
#define IBSMD_IMPORT_OPENSM_FATES_H

#include <stdbool.h>

struct opensm_fate {
	const char *osm;  /* OpenSM's option */
	const char *dflt; /* OpenSM's default value; NULL: the fate does not depend on it */
	const char *same; /* what ibsmd does (at the default, or whatever the value) */
	/* with another value than the default: what the site loses (NULL: as same) */
	const char *other;
};

/* The fate of an OpenSM option, or NULL for an option OpenSM 3.3.23 does not have. */
const struct opensm_fate *opensm_fate_of(const char *key);
/* The line for val; *changed when val is not OpenSM's default, which ibsmd's behaviour
 * is: the site asked for something ibsmd does not do (warn about it). */
const char *opensm_fate_text(const struct opensm_fate *f, const char *val, bool *changed);

/* Do two values of an option say the same: equal as numbers when both are ("0x07", "7"),
 * else as words ("TRUE", "true")? */
bool opensm_same_value(const char *a, const char *b);

#endif
