/* ibsmd --dry-run: a read-only trial on a fabric another SM runs. One sweep of Gets (IsSM
 * never set, no SM or SA agent registered, no Set sent), the configured engine chain, and a
 * report of what ibsmd would change and how its routes and the running SM's check out. */
#include "daemon/dryrun.h"

#include <inttypes.h>
#include <stdio.h>

#include "sm/sm.h"

static void print_check(FILE *out, const char *what, uint64_t theirs, uint64_t ours)
{
	fprintf(out, "  %-26s %18" PRIu64 " %18" PRIu64 "\n", what, theirs, ours);
}

static void print_layers(char *b, size_t n, uint16_t layers, uint16_t cyclic)
{
	unsigned used = 0, bad = 0;
	for (unsigned l = 0; l < 16; l++) {
		used += layers >> l & 1;
		bad += cyclic >> l & 1;
	}
	if (!bad)
		snprintf(b, n, "none (%u SL%s)", used, used == 1 ? "" : "s");
	else
		snprintf(b, n, "%u of %u SL%s", bad, used, used == 1 ? "" : "s");
}

/* The report, and whether ibsmd's own routes pass: 0 yes, 1 no. */
static int report(FILE *out, const struct sm_dry_report *r, const char *where, uint16_t sm_lid,
                  const struct sm_status *st)
{
	const struct sm_counts *c = &st->counts;
	fprintf(out,
	        "ibsmd dry run on %s: read-only (Gets only, IsSM never set), %" PRIu64
	        " Sets sent\n",
	        where, r->sets_refused);
	fprintf(out,
	        "fabric: %u nodes (%u switches, %u CAs), %u links; the running SM at LID %u; LIDs "
	        "as the ports hold them\n",
	        c->nodes, c->switches, c->cas, c->links, sm_lid);
	fprintf(out, "ibsmd routes with: %s (%.3f s)\n", r->engine, st->times.route);
	fprintf(out,
	        "tables: %u of %u switches would change, %" PRIu64 " of %" PRIu64
	        " entries (LIDs in use)%s\n",
	        r->switches_changed, r->switches, r->entries_changed, r->entries,
	        r->switches_unread ? " (some switches' tables could not be read)" : "");
	char lt[48], lo[48];
	print_layers(lt, sizeof(lt), r->theirs.layers, r->theirs.cyclic);
	print_layers(lo, sizeof(lo), r->ours.layers, r->ours.cyclic);
	fprintf(out, "\n  %-26s %18s %18s\n", "", "running SM", "ibsmd");
	print_check(out, "pairs", r->theirs.pairs, r->ours.pairs);
	print_check(out, "unreachable pairs", r->theirs.unreachable, r->ours.unreachable);
	print_check(out, "forwarding loops", r->theirs.loops, r->ours.loops);
	fprintf(out, "  %-26s %18s %18s\n", "credit loops", lt, lo);
	fprintf(out, "  %-26s %18s %18u (links run %u data VL%s)\n", "SL/VL layers", "-",
	        r->our_layers, r->link_vls, r->link_vls == 1 ? "" : "s");
	if (r->nsws) {
		fprintf(out, "\nswitches whose tables would change (entries / LIDs in use):\n");
		for (uint32_t i = 0; i < r->nsws; i++)
			fprintf(out, "  0x%016" PRIx64 " %-32s %8u / %u\n", r->sws[i].guid,
			        r->sws[i].desc, r->sws[i].changed, r->sws[i].entries);
	}
	fprintf(out, "\n");
	if (r->theirs.unreachable > r->ours.unreachable)
		fprintf(out,
		        "the running SM's routes leave %" PRIu64 " pairs unreachable (e.g. LID %u "
		        "to LID %u) that ibsmd's reach\n",
		        r->theirs.unreachable - r->ours.unreachable, r->theirs.example_src,
		        r->theirs.example_dst);
	if (r->theirs.cyclic && !r->ours.cyclic)
		fprintf(out,
		        "the running SM's routes have a credit loop on one SL (unless it separates "
		        "them by SL-to-VL tables this report cannot see); ibsmd's have none\n");
	bool ok = !r->ours.unreachable && !r->ours.loops && !r->ours.cyclic &&
	          r->our_layers <= r->link_vls && !r->sets_refused && r->done;
	if (ok)
		fprintf(out, "verdict: ibsmd's routes reach every pair, free of credit loops\n");
	else
		fprintf(out,
		        "verdict: ibsmd's routes fail a check above%s: please send this report\n",
		        r->done ? "" : " (no engine routed)");
	fprintf(out, "Send this report, with ibsmd --version and your ibsmd.yaml, to the ibsmd "
	             "developers: it names no key and nothing else of the fabric's.\n");
	return ok ? 0 : 1;
}

int dry_run(struct ibsmd_config *cfg, const struct log *lg, struct mad_transport *t)
{
	struct ev_loop *loop = ev_default_loop(EVFLAG_AUTO);
	struct sm *sm = sm_new_dry_run(cfg, lg, loop, t);
	if (!sm || sm_start(sm) < 0) {
		fprintf(stderr, "ibsmd: cannot start the dry run\n");
		sm_free(sm);
		return 1;
	}
	ev_run(loop, 0);
	struct mad_local_port lp = {0};
	t->ops->query_port(t, &lp);
	const struct sm_dry_report *r = sm_dry_report(sm);
	struct sm_status st = sm_status(sm);
	int rc;
	if (!r->done && !st.counts.nodes) {
		printf("dry run: nothing discovered: %s\n",
		       st.exit_reason[0] ? st.exit_reason : "unknown");
		rc = 1;
	} else {
		rc = report(stdout, r, t->desc, lp.sm_lid, &st);
	}
	sm_stop(sm);
	sm_free(sm);
	return rc;
}
