#include "sync/journal.h"

#include <stdlib.h>
#include <string.h>

void sync_journal_init(struct sync_journal *j, uint64_t epoch, uint32_t max_changes)
{
	memset(j, 0, sizeof(*j));
	j->epoch = epoch;
	j->max_changes = max_changes ? max_changes : 1u << 20;
	struct sync_gen *g = vec_push(&j->gens); /* generation 0: nothing */
	if (g)
		*g = (struct sync_gen){0, 0};
}

static void drop_changes(struct sync_journal *j, uint32_t n)
{
	if (!n)
		return;
	for (uint32_t i = 0; i < n; i++)
		free(j->changes.v[i].line);
	memmove(j->changes.v, j->changes.v + n, sizeof(j->changes.v[0]) * (j->changes.n - n));
	j->changes.n -= n;
}

void sync_journal_free(struct sync_journal *j)
{
	drop_changes(j, j->changes.n);
	vec_free(&j->changes);
	vec_free(&j->gens);
	lineset_free(&j->cur);
}

/* No delta reaches the current generation any more: every standby gets a full copy. */
static void forget_history(struct sync_journal *j)
{
	drop_changes(j, j->changes.n);
	j->gen++;
	j->base_gen = j->gen;
	j->gens.n = 0;
	struct sync_gen *g = vec_push(&j->gens); /* room was there: cannot fail */
	if (g)
		*g = (struct sync_gen){j->cur.sum, lineset_count(&j->cur)};
}

static int record(struct sync_journal *j, char op, const char *line)
{
	char *copy = strdup(line);
	struct sync_change *c = copy ? vec_push(&j->changes) : NULL;
	if (!c) {
		free(copy);
		return -1;
	}
	*c = (struct sync_change){j->gen + 1, op, copy};
	return 0;
}

/* The first change after generation g. */
static uint32_t first_after(const struct sync_journal *j, uint64_t g)
{
	uint32_t lo = 0, hi = j->changes.n;
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;
		if (j->changes.v[mid].gen <= g)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* Keep the journal within max_changes, or twice the items when there are more (a delta is
 * never sent when a full copy is smaller): the oldest generations go, half at a time. */
static void trim(struct sync_journal *j)
{
	uint64_t limit = 2ull * lineset_count(&j->cur);
	if (limit < j->max_changes)
		limit = j->max_changes;
	if (j->changes.n <= limit)
		return;
	uint64_t cut = j->changes.v[j->changes.n / 2].gen; /* generations up to here go */
	drop_changes(j, first_after(j, cut));
	uint32_t skip = (uint32_t)(cut - j->base_gen);
	memmove(j->gens.v, j->gens.v + skip, sizeof(j->gens.v[0]) * (j->gens.n - skip));
	j->gens.n -= skip;
	j->base_gen = cut;
}

int sync_journal_update(struct sync_journal *j, const char *text, size_t len)
{
	struct lineset next = {0};
	for (size_t i = 0; i < len;) {
		const char *nl = memchr(text + i, '\n', len - i);
		size_t n = nl ? (size_t)(nl - (text + i)) : len - i;
		if (n && lineset_add(&next, text + i, n) < 0)
			goto oom;
		i += n + 1;
	}
	uint32_t mark = j->changes.n;
	int changes = 0;
	/* what went first, then what came: a changed item is one of each, in that order */
	for (uint32_t i = 0; i < j->cur.lines.n; i++) {
		const char *l = j->cur.lines.v[i];
		if (!lineset_has(&next, l, strlen(l))) {
			if (record(j, '-', l) < 0)
				goto oom_recorded;
			changes++;
		}
	}
	for (uint32_t i = 0; i < next.lines.n; i++) {
		const char *l = next.lines.v[i];
		if (!lineset_has(&j->cur, l, strlen(l))) {
			if (record(j, '+', l) < 0)
				goto oom_recorded;
			changes++;
		}
	}
	if (!changes) {
		lineset_free(&next);
		return 0;
	}
	if (vec_reserve(&j->gens, (uint64_t)j->gens.n + 1) < 0)
		goto oom_recorded;
	j->gens.n++;
	lineset_free(&j->cur);
	j->cur = next;
	j->gen++;
	j->gens.v[j->gens.n - 1] = (struct sync_gen){j->cur.sum, lineset_count(&j->cur)};
	trim(j);
	return changes;
oom_recorded:
	while (j->changes.n > mark)
		free(j->changes.v[--j->changes.n].line);
oom:
	lineset_free(&next);
	forget_history(j);
	return -1;
}

/* Lines with their sign and a newline each, into one buffer. */
struct text {
	char *buf;
	size_t len, cap;
};

static int put(struct text *t, char op, const char *line)
{
	size_t n = strlen(line);
	if (t->len + n + 2 > t->cap) {
		size_t cap = t->cap ? t->cap : 4096;
		while (cap < t->len + n + 2)
			cap *= 2;
		char *b = realloc(t->buf, cap);
		if (!b)
			return -1;
		t->buf = b;
		t->cap = cap;
	}
	t->buf[t->len++] = op;
	memcpy(t->buf + t->len, line, n);
	t->len += n;
	t->buf[t->len++] = '\n';
	return 0;
}

int sync_journal_answer(const struct sync_journal *j, const struct mad_sync_req *rq,
                        struct mad_sync_resp *resp, char **payload, size_t *len)
{
	uint32_t count = lineset_count(&j->cur);
	*resp = (struct mad_sync_resp){
	    .epoch = j->epoch, .to_gen = j->gen, .checksum = j->cur.sum, .count = count};
	*payload = NULL;
	*len = 0;
	bool ours = rq->epoch == j->epoch;
	if (ours && rq->generation == j->gen && rq->checksum == j->cur.sum && rq->count == count) {
		resp->kind = SYNC_CURRENT;
		resp->from_gen = j->gen;
		return 0;
	}
	struct text t = {0};
	if (ours && rq->generation >= j->base_gen && rq->generation < j->gen) {
		const struct sync_gen *g = &j->gens.v[rq->generation - j->base_gen];
		uint32_t from = first_after(j, rq->generation);
		/* the standby holds what we had then, and the delta is the smaller answer */
		if (g->sum == rq->checksum && g->count == rq->count &&
		    j->changes.n - from <= count) {
			resp->kind = SYNC_DELTA;
			resp->from_gen = rq->generation;
			for (uint32_t i = from; i < j->changes.n; i++)
				if (put(&t, j->changes.v[i].op, j->changes.v[i].line) < 0)
					goto oom;
			goto done;
		}
	}
	resp->kind = SYNC_FULL;
	resp->from_gen = 0;
	for (uint32_t i = 0; i < j->cur.lines.n; i++)
		if (put(&t, '+', j->cur.lines.v[i]) < 0)
			goto oom;
done:
	*payload = t.buf;
	*len = t.len;
	resp->payload_len = (uint32_t)t.len;
	return 0;
oom:
	free(t.buf);
	return -1;
}

/* ---- the standby's side ---- */

static bool payload_valid(const char *p, size_t len, bool full)
{
	for (size_t i = 0; i < len;) {
		const char *nl = memchr(p + i, '\n', len - i);
		if (!nl || nl == p + i + 1)
			return false; /* every line ends in a newline and has more than its sign */
		if (p[i] != '+' && (full || p[i] != '-'))
			return false;
		if (memchr(p + i, 0, (size_t)(nl - (p + i))))
			return false;
		i = (size_t)(nl - p) + 1;
	}
	return true;
}

static void reset(struct sync_mirror *m)
{
	m->epoch = 0;
	m->gen = 0;
}

enum sync_apply_result sync_mirror_apply(struct sync_mirror *m, const struct mad_sync_resp *r,
                                         const char *payload, size_t len, sync_line_fn fn,
                                         void *ctx)
{
	if (r->kind == SYNC_NOT_READY)
		return SYNC_APPLIED;
	bool full = r->kind == SYNC_FULL;
	if (r->kind > SYNC_FULL || !payload_valid(payload, len, full) ||
	    (r->kind == SYNC_CURRENT && len) ||
	    (!full && (r->epoch != m->epoch || r->from_gen != m->gen))) {
		reset(m);
		return SYNC_MALFORMED;
	}
	if (full) {
		struct lineset next = {0};
		for (size_t i = 0; i < len;) {
			const char *nl = memchr(payload + i, '\n', len - i);
			if (lineset_add(&next, payload + i + 1, (size_t)(nl - payload) - i - 1) <
			    0) {
				lineset_free(&next);
				reset(m);
				return SYNC_NOMEM;
			}
			i = (size_t)(nl - payload) + 1;
		}
		if (fn) {
			for (uint32_t i = 0; i < m->set.lines.n; i++) {
				const char *l = m->set.lines.v[i];
				if (!lineset_has(&next, l, strlen(l)))
					fn(ctx, '-', l);
			}
			for (uint32_t i = 0; i < next.lines.n; i++) {
				const char *l = next.lines.v[i];
				if (!lineset_has(&m->set, l, strlen(l)))
					fn(ctx, '+', l);
			}
		}
		lineset_free(&m->set);
		m->set = next;
	} else {
		for (size_t i = 0; i < len;) {
			const char *nl = memchr(payload + i, '\n', len - i);
			const char *l = payload + i + 1;
			size_t n = (size_t)(nl - l);
			if (payload[i] == '-') {
				if (lineset_has(&m->set, l, n)) {
					if (fn) {
						char *c = strndup(l, n);
						if (c)
							fn(ctx, '-', c);
						free(c);
					}
					lineset_del(&m->set, l, n);
				}
			} else {
				int a = lineset_add(&m->set, l, n);
				if (a < 0) {
					reset(m);
					return SYNC_NOMEM;
				}
				if (a && fn)
					fn(ctx, '+', m->set.lines.v[m->set.lines.n - 1]);
			}
			i = (size_t)(nl - payload) + 1;
		}
	}
	if (m->set.sum != r->checksum || lineset_count(&m->set) != r->count) {
		reset(m);
		return SYNC_DIVERGED;
	}
	m->epoch = r->epoch;
	m->gen = r->to_gen;
	return SYNC_APPLIED;
}

void sync_mirror_free(struct sync_mirror *m)
{
	lineset_free(&m->set);
	reset(m);
}
