/* Component masks. IBA numbers a record's components in wire order, reserved fields included;
 * the record layouts already describe the wire, so the components follow from them: each
 * field's bit span (probed by encoding it alone, since libibmad keeps its widths to itself),
 * gaps between fields as reserved components, embedded tables as one component. */
#include <stdlib.h>
#include <string.h>

#include "mad/smp_attrs.h"
#include "sa/sa.h"

struct span {
	uint16_t off, len;
};

static int cmp_span(const void *a, const void *b)
{
	const struct span *x = a, *y = b;
	return (int)x->off - (int)y->off;
}

/* The bits a field occupies: encode it alone with every value bit set. */
static struct span field_span(const struct mad_field *f)
{
	uint8_t host[1024] = {0}, wire[512] = {0};
	size_t width = f->type == MF_U8    ? 1
	               : f->type == MF_U16 ? 2
	               : f->type == MF_U32 ? 4
	               : f->type == MF_U64 ? 8
	                                   : f->bytes;
	size_t n = f->count > 1 ? f->count : 1;
	memset(host + f->off, 0xff, width * n);
	struct mad_layout one = {.name = "probe",
	                         .size = sizeof(wire),
	                         .host_size = sizeof(host),
	                         .nfields = 1,
	                         .fields = f};
	mad_layout_encode(&one, host, wire, sizeof(wire), NULL);
	int first = -1, last = -1;
	for (int i = 0; i < (int)sizeof(wire) * 8; i++) {
		if (wire[i / 8] & (0x80 >> (i % 8))) {
			if (first < 0)
				first = i;
			last = i;
		}
	}
	struct span s = {(uint16_t)(first < 0 ? 0 : first),
	                 (uint16_t)(first < 0 ? 0 : last - first + 1)};
	return s;
}

static bool is_table(const struct mad_layout *l)
{
	return l == &mad_pkey_table_layout || l == &mad_sl2vl_table_layout ||
	       l == &mad_vlarb_table_layout || l == &mad_lft_block_layout ||
	       l == &mad_mft_block_layout;
}

static void collect(const struct mad_layout *l, unsigned base, struct span *spans, unsigned *n,
                    unsigned max)
{
	for (unsigned i = 0; i < l->nfields && *n < max; i++) {
		const struct mad_field *f = &l->fields[i];
		if (f->type == MF_NESTED) {
			if (is_table(f->nested))
				spans[(*n)++] = (struct span){(uint16_t)(base + f->bitoff),
				                              (uint16_t)(f->nested->size * 8)};
			else
				collect(f->nested, base + f->bitoff, spans, n, max);
			continue;
		}
		struct span s = field_span(f);
		s.off = (uint16_t)(s.off + base);
		spans[(*n)++] = s;
	}
}

void sa_components_from_layout(const struct mad_layout *l, struct sa_components *out)
{
	struct span spans[96];
	unsigned n = 0;
	collect(l, 0, spans, &n, 96);
	qsort(spans, n, sizeof(spans[0]), cmp_span);
	out->n = 0;
	unsigned at = 0;
	for (unsigned i = 0; i < n && out->n < 96; i++) {
		if (spans[i].off > at && out->n < 96) /* a reserved field */
			out->c[out->n++] = (struct sa_component){
			    .bitoff = (uint16_t)at, .bitlen = (uint16_t)(spans[i].off - at)};
		if (out->n < 96)
			out->c[out->n++] =
			    (struct sa_component){.bitoff = spans[i].off, .bitlen = spans[i].len};
		at = spans[i].off + spans[i].len;
	}
}

static bool bits_subset(const uint8_t *req, const uint8_t *rec, unsigned off, unsigned len)
{
	uint64_t want = mad_bits_get(req, off, len), have = mad_bits_get(rec, off, len);
	return (have & want) == want;
}

static bool bits_equal(const uint8_t *a, const uint8_t *b, unsigned off, unsigned len)
{
	if (!(off & 7) && !(len & 7))
		return !memcmp(a + off / 8, b + off / 8, len / 8);
	while (len) {
		unsigned n = len > 64 ? 64 : len;
		if (mad_bits_get(a, off, n) != mad_bits_get(b, off, n))
			return false;
		off += n;
		len -= n;
	}
	return true;
}

bool sa_components_match(const struct sa_components *c, uint64_t mask, const uint8_t *a,
                         const uint8_t *b)
{
	for (unsigned i = 0; i < c->n && mask; i++, mask >>= 1)
		if ((mask & 1) &&
		    !(c->c[i].subset ? bits_subset(a, b, c->c[i].bitoff, c->c[i].bitlen)
		                     : bits_equal(a, b, c->c[i].bitoff, c->c[i].bitlen)))
			return false;
	return true;
}

void sa_records_filter(struct sa_records *r, const struct sa_components *c, uint64_t mask,
                       const uint8_t *want, uint32_t max)
{
	r->filt = c;
	r->mask = mask;
	r->want = want;
	r->max = max;
}

void sa_records_settle(struct sa_records *r)
{
	if (!r->pending)
		return;
	r->pending = false;
	if (r->filt && !sa_components_match(r->filt, r->mask, r->want,
	                                    r->buf + (size_t)(r->n - 1) * r->stride))
		r->n--; /* its place is taken by the next */
}

uint8_t *sa_records_add(struct sa_records *r)
{
	sa_records_settle(r);
	if (r->max && r->n >= r->max) {
		r->capped = true;
		return NULL;
	}
	if (r->n == r->cap) {
		uint32_t ncap = r->cap ? r->cap * 2 : 64;
		uint8_t *nb = realloc(r->buf, (size_t)ncap * r->stride);
		if (!nb)
			return NULL;
		r->buf = nb;
		r->cap = ncap;
	}
	uint8_t *rec = r->buf + (size_t)r->n++ * r->stride;
	memset(rec, 0, r->stride);
	r->pending = r->filt != NULL;
	return rec;
}

void sa_records_free(struct sa_records *r)
{
	free(r->buf);
	memset(r, 0, sizeof(*r));
}
