/* The SA's state file: what clients created (services, multicast groups and their members,
 * event subscriptions) survives a restart of ibsmd, as the clients expect: an IPoIB host
 * does not join again because the SM restarted.
 *
 * STATE_DIR/sa-state is text, a line per item, written whole to a temporary file, synced
 * and renamed over the old one, so a crash leaves the previous version, never half of one.
 * Mode 0600: the records carry their ServiceKeys, which are what lets a host change another
 * host's service.
 * A client's change (a registration, a join, a subscription) is answered only once the
 * file holding it is on disk: answers wait for the next save, which comes within a few
 * milliseconds and carries every change made meanwhile (a group commit), so an
 * acknowledged change survives kill -9. Changes nobody waits for are saved a second
 * after the last one, and at shutdown:
 *   service EXPIRES RECORD-HEX
 *   group WELL-KNOWN RECORD-HEX
 *   member MGID-HEX PORT-GUID GID-HEX SCOPE JOINSTATE PROXY
 *   sub PORT-GUID INFORMINFO-HEX
 *   alias PORT-GUID INDEX ALIAS-GUID
 * It is read when ibsmd starts and applied after the first sweep, when the ports are known:
 * what belongs to a port that is not in the fabric any more is dropped, as it would have
 * been had ibsmd stayed up. A line it cannot read is logged with its number and skipped.
 * Each kind of line is its owner's (struct sa_state_kind, registered from sa.c): this file
 * knows none of them by name. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <ev.h>

#include "sa/sa_int.h"
#include "util/statefile.h"
#include "util/vec.h"

#define STATE_FILE  "sa-state"
#define SAVE_DELAY  1.0   /* changes nobody waits for (expiries, ports that left) */
#define COMMIT_MIN  0.002 /* answers held: saved this soon, to batch a burst... */
#define COMMIT_MAX  0.25  /* ... and never later than this */
#define MAX_LINE    1024
#define MAX_PENDING 1000000

static int state_save(struct sa *sa);

void sa_hex_put(FILE *f, const uint8_t *b, size_t n)
{
	for (size_t i = 0; i < n; i++)
		fprintf(f, "%02x", b[i]);
}

bool sa_hex_get(const char *s, uint8_t *out, size_t n)
{
	if (!s || strlen(s) != 2 * n)
		return false;
	for (size_t i = 0; i < n; i++) {
		unsigned v;
		if (sscanf(s + 2 * i, "%2x", &v) != 1)
			return false;
		out[i] = (uint8_t)v;
	}
	return true;
}

static void path_of(const struct sa *sa, char *buf, size_t len, const char *suffix)
{
	snprintf(buf, len, "%s/%s%s", sa->cfg->state_dir, STATE_FILE, suffix);
}

int sa_state_save(struct sa *sa)
{
	double t0 = ev_time();
	int rc = state_save(sa);
	sa->last_save_s = ev_time() - t0;
	sa_state_release(sa); /* saved, or it cannot be: the answers go either way */
	return rc;
}

static int state_save(struct sa *sa)
{
	struct statefile sf;
	if (statefile_begin(&sf, sa->cfg->state_dir, STATE_FILE, 0600) < 0) {
		log_err(sa->log, "sa", "cannot write %s: %s; clients' state is not kept", sf.tmp,
		        strerror(errno));
		return -1;
	}
	fprintf(sf.f, "# ibsmd SA state: services, multicast groups, subscriptions\n");
	sa_state_write(sa, sf.f);
	if (statefile_commit(&sf) < 0) {
		log_err(sa->log, "sa", "cannot write %s: %s; clients' state is not kept", sf.path,
		        strerror(errno));
		return -1;
	}
	sa->state_dirty = false;
	sa->st.state_writes++;
	return 0;
}

static void save_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
	(void)loop;
	(void)revents;
	struct sa *sa = w->data;
	if (sa->state_dirty)
		sa_state_save(sa);
	else
		sa_state_release(sa);
}

void sa_state_register(struct sa *sa, const struct sa_state_kind *k)
{
	if (sa->nkinds < SA_STATE_MAX_KINDS)
		sa->kinds[sa->nkinds++] = k;
}

void sa_state_write(struct sa *sa, FILE *f)
{
	if (!sa->state_ready) {
		/* not applied yet (a standby's are never): what the file or the master gave */
		for (uint32_t i = 0; i < sa->npending; i++)
			fprintf(f, "%s\n", sa->pending[i]);
		return;
	}
	for (unsigned i = 0; i < sa->nkinds; i++)
		if (sa->kinds[i]->save)
			sa->kinds[i]->save(sa, f);
}

bool sa_state_ready(const struct sa *sa)
{
	return sa->state_ready;
}

uint64_t sa_state_changes(const struct sa *sa)
{
	return sa->state_changes;
}

bool sa_state_unsaved(const struct sa *sa)
{
	return sa->state_dirty;
}

static void schedule_save(struct sa *sa)
{
	sa->state_dirty = true;
	if (!ev_is_active(&sa->save_timer)) {
		ev_timer_set(&sa->save_timer, SAVE_DELAY, 0.);
		ev_timer_start(sa->loop, &sa->save_timer);
	}
}

void sa_state_hold(struct sa *sa, const struct mad_addr *to, const uint8_t *mad)
{
	if (!sa->cfg->state_dir[0] ||
	    array_reserve(&sa->held, &sa->held_cap, sa->nheld + 1ull) < 0) {
		mad_dispatcher_respond(sa->d, to, mad, MAD_SIZE);
		return;
	}
	struct sa_held_answer *h = &sa->held[sa->nheld++];
	h->to = *to;
	memcpy(h->mad, mad, MAD_SIZE);
	/* a group commit: the first held answer brings the save near; the window grows with
	 * what a save costs, so that saving never takes more than about half the loop */
	double when = 2 * sa->last_save_s;
	when = when < COMMIT_MIN ? COMMIT_MIN : when > COMMIT_MAX ? COMMIT_MAX : when;
	if (sa->nheld == 1 || !ev_is_active(&sa->save_timer) ||
	    ev_timer_remaining(sa->loop, &sa->save_timer) > when) {
		ev_timer_stop(sa->loop, &sa->save_timer);
		ev_timer_set(&sa->save_timer, when, 0.);
		ev_timer_start(sa->loop, &sa->save_timer);
	}
}

void sa_state_release(struct sa *sa)
{
	for (uint32_t i = 0; i < sa->nheld; i++)
		mad_dispatcher_respond(sa->d, &sa->held[i].to, sa->held[i].mad, MAD_SIZE);
	sa->nheld = 0;
}

static void drop_pending(struct sa *sa)
{
	for (uint32_t i = 0; i < sa->npending; i++)
		free(sa->pending[i]);
	free(sa->pending);
	sa->pending = NULL;
	sa->npending = sa->pending_cap = 0;
}

int sa_state_replace(struct sa *sa, const char *const *lines, uint32_t n)
{
	if (sa->state_ready)
		return -1; /* a master's own state is not overwritten */
	drop_pending(sa);
	if (n > MAX_PENDING)
		n = MAX_PENDING;
	if (n && array_reserve(&sa->pending, &sa->pending_cap, n) < 0)
		return -1;
	for (uint32_t i = 0; i < n; i++) {
		sa->pending[sa->npending] = strdup(lines[i]);
		if (!sa->pending[sa->npending]) {
			drop_pending(sa);
			return -1;
		}
		sa->npending++;
	}
	sa->state_changes++;
	schedule_save(sa);
	return 0;
}

bool sa_state_reset(struct sa *sa)
{
	if (!sa->state_ready)
		return false;
	/* The clients' state is the master's now, and comes back from it by the sync: what this
	 * SM held goes, so that it cannot come back stale if this SM is master again. */
	sa_state_save(sa);
	for (unsigned i = 0; i < sa->nkinds; i++)
		if (sa->kinds[i]->forget)
			sa->kinds[i]->forget(sa);
	sa->state_ready = false;
	sa->state_dirty = false;
	sa->state_changes++;
	log_notice(sa->log, "sa",
	           "standing by: services, groups and subscriptions are the master's now; this SA "
	           "keeps the copy the master sends");
	return true;
}

void sa_state_changed(struct sa *sa)
{
	if (!sa->state_ready)
		return; /* the file's contents are not applied yet: keep them as they are */
	sa->state_changes++;
	schedule_save(sa);
}

void sa_state_load(struct sa *sa)
{
	ev_init(&sa->save_timer, save_cb);
	sa->save_timer.data = sa;
	char path[512];
	path_of(sa, path, sizeof(path), "");
	statefile_discard_tmp(sa->cfg->state_dir, STATE_FILE);
	FILE *f = fopen(path, "r");
	if (!f) {
		if (errno != ENOENT)
			log_warn(sa->log, "sa", "cannot read %s: %s; starting without it", path,
			         strerror(errno));
		return;
	}
	char line[MAX_LINE];
	while (fgets(line, sizeof(line), f) && sa->npending < MAX_PENDING) {
		line[strcspn(line, "\n")] = 0;
		if (!line[0] || line[0] == '#')
			continue;
		if (array_reserve(&sa->pending, &sa->pending_cap, sa->npending + 1ull) < 0)
			break;
		sa->pending[sa->npending] = strdup(line);
		if (sa->pending[sa->npending])
			sa->npending++;
	}
	fclose(f);
}

/* The kind of a line, by its first word (NULL: none registered). */
static const struct sa_state_kind *kind_of(const struct sa *sa, const char *l)
{
	for (unsigned i = 0; i < sa->nkinds; i++) {
		size_t n = strlen(sa->kinds[i]->prefix);
		if (!strncmp(l, sa->kinds[i]->prefix, n) && l[n] == ' ')
			return sa->kinds[i];
	}
	return NULL;
}

void sa_state_apply(struct sa *sa)
{
	if (sa->state_ready)
		return;
	char path[512];
	path_of(sa, path, sizeof(path), "");
	/* each kind in its pass, lines of no kind after them all */
	unsigned unknown = 0;
	for (unsigned i = 0; i < sa->nkinds; i++)
		if (sa->kinds[i]->pass >= unknown)
			unknown = sa->kinds[i]->pass + 1;
	uint32_t ok = 0, bad = 0;
	for (unsigned pass = 0; pass <= unknown; pass++) {
		for (uint32_t i = 0; i < sa->npending; i++) {
			const char *l = sa->pending[i];
			const struct sa_state_kind *k = kind_of(sa, l);
			if ((k ? k->pass : unknown) != pass)
				continue;
			if (k && k->restore(sa, l + strlen(k->prefix) + 1)) {
				ok++;
			} else {
				bad++;
				log_info(sa->log, "sa", "%s: item %u not restored: %.60s", path,
				         i + 1, l);
			}
		}
	}
	drop_pending(sa);
	for (unsigned i = 0; i < sa->nkinds; i++)
		if (sa->kinds[i]->restored)
			sa->kinds[i]->restored(sa);
	sa->state_ready = true;
	sa->state_changes++;
	if (ok || bad)
		log_notice(sa->log, "sa",
		           "%s: %u items restored (services, groups, members, subscriptions), %u "
		           "dropped (their ports left, or unreadable)",
		           path, ok, bad);
	if (bad)
		sa_state_changed(sa);
}

void sa_state_free(struct sa *sa)
{
	if (sa->state_dirty)
		sa_state_save(sa);
	sa_state_release(sa);
	free(sa->held);
	sa->held = NULL;
	sa->held_cap = 0;
	if (sa->loop)
		ev_timer_stop(sa->loop, &sa->save_timer);
	drop_pending(sa);
}
