#include "mad/mad_layout.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include <infiniband/mad.h>

void mad_error_set(struct mad_error *err, const char *fmt, ...)
{
	if (!err)
		return;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
	va_end(ap);
}

uint64_t mad_bits_get(const uint8_t *buf, unsigned bitoff, unsigned bitlen)
{
	uint64_t v = 0;
	if ((bitoff & 7) == 0 && (bitlen & 7) == 0) {
		for (unsigned i = 0; i < bitlen / 8; i++)
			v = (v << 8) | buf[bitoff / 8 + i];
		return v;
	}
	for (unsigned i = 0; i < bitlen; i++) {
		unsigned bit = bitoff + i;
		v = (v << 1) | ((buf[bit >> 3] >> (7 - (bit & 7))) & 1u);
	}
	return v;
}

void mad_bits_set(uint8_t *buf, unsigned bitoff, unsigned bitlen, uint64_t val)
{
	if ((bitoff & 7) == 0 && (bitlen & 7) == 0) {
		for (unsigned i = bitlen / 8; i-- > 0;) {
			buf[bitoff / 8 + i] = (uint8_t)val;
			val >>= 8;
		}
		return;
	}
	for (unsigned i = bitlen; i-- > 0;) {
		unsigned bit = bitoff + i;
		uint8_t mask = (uint8_t)(0x80u >> (bit & 7));
		if (val & 1)
			buf[bit >> 3] |= mask;
		else
			buf[bit >> 3] &= (uint8_t)~mask;
		val >>= 1;
	}
}

static uint64_t host_get(const void *p, enum mad_ftype t)
{
	switch (t) {
	case MF_U8: return *(const uint8_t *)p;
	case MF_U16: {
		uint16_t v;
		memcpy(&v, p, 2);
		return v;
	}
	case MF_U32: {
		uint32_t v;
		memcpy(&v, p, 4);
		return v;
	}
	case MF_U64: {
		uint64_t v;
		memcpy(&v, p, 8);
		return v;
	}
	default: return 0;
	}
}

static void host_set(void *p, enum mad_ftype t, uint64_t v)
{
	switch (t) {
	case MF_U8: *(uint8_t *)p = (uint8_t)v; break;
	case MF_U16: {
		uint16_t x = (uint16_t)v;
		memcpy(p, &x, 2);
		break;
	}
	case MF_U32: {
		uint32_t x = (uint32_t)v;
		memcpy(p, &x, 4);
		break;
	}
	case MF_U64: memcpy(p, &v, 8); break;
	default: break;
	}
}

static size_t host_width(enum mad_ftype t)
{
	static const size_t w[] = {[MF_U8] = 1, [MF_U16] = 2, [MF_U32] = 4, [MF_U64] = 8};
	return t <= MF_U64 ? w[t] : 0;
}

/* libibmad's accessors take a non-const buffer but only read it on the get side. */
static void decode_field(const struct mad_field *f, const uint8_t *buf, uint8_t *out)
{
	uint8_t *dst = out + f->off;
	uint8_t *src = (uint8_t *)buf;

	if (f->ibf) {
		switch (f->type) {
		case MF_U64: host_set(dst, MF_U64, mad_get_field64(src, 0, f->ibf)); break;
		case MF_BYTES:
		case MF_TEXT: mad_get_array(src, 0, f->ibf, dst); break;
		default: host_set(dst, f->type, mad_get_field(src, 0, f->ibf)); break;
		}
		return;
	}
	if (f->type == MF_BYTES || f->type == MF_TEXT) {
		memcpy(dst, buf + f->bitoff / 8, f->bytes);
		return;
	}
	unsigned n = f->count ? f->count : 1;
	for (unsigned i = 0; i < n; i++)
		host_set(dst + i * host_width(f->type), f->type,
		         mad_bits_get(buf, f->bitoff + i * f->stride, f->bitlen));
}

static void encode_field(const struct mad_field *f, const uint8_t *in, uint8_t *buf)
{
	const uint8_t *src = in + f->off;

	if (f->ibf) {
		switch (f->type) {
		case MF_U64: mad_set_field64(buf, 0, f->ibf, host_get(src, MF_U64)); break;
		case MF_BYTES:
		case MF_TEXT: mad_set_array(buf, 0, f->ibf, (void *)src); break;
		default: mad_set_field(buf, 0, f->ibf, (uint32_t)host_get(src, f->type)); break;
		}
		return;
	}
	if (f->type == MF_BYTES || f->type == MF_TEXT) {
		memcpy(buf + f->bitoff / 8, src, f->bytes);
		return;
	}
	unsigned n = f->count ? f->count : 1;
	for (unsigned i = 0; i < n; i++) {
		uint64_t v = host_get(src + i * host_width(f->type), f->type);
		if (f->bitlen < 64)
			v &= (UINT64_C(1) << f->bitlen) - 1;
		mad_bits_set(buf, f->bitoff + i * f->stride, f->bitlen, v);
	}
}

int mad_layout_decode(const struct mad_layout *l, const uint8_t *buf, size_t len, void *out,
                      struct mad_error *err)
{
	if (!buf || len < l->size) {
		mad_error_set(err, "%s: short buffer: %zu bytes, need %u", l->name, buf ? len : 0,
		              l->size);
		return -1;
	}
	memset(out, 0, l->host_size);
	for (unsigned i = 0; i < l->nfields; i++) {
		const struct mad_field *f = &l->fields[i];
		if (f->type == MF_NESTED) {
			size_t boff = f->bitoff / 8;
			if (mad_layout_decode(f->nested, buf + boff, len - boff,
			                      (uint8_t *)out + f->off, err) < 0)
				return -1;
			continue;
		}
		decode_field(f, buf, out);
	}
	return 0;
}

int mad_layout_encode(const struct mad_layout *l, const void *in, uint8_t *buf, size_t len,
                      struct mad_error *err)
{
	if (!buf || len < l->size) {
		mad_error_set(err, "%s: buffer of %zu bytes too small, need %u", l->name,
		              buf ? len : 0, l->size);
		return -1;
	}
	for (unsigned i = 0; i < l->nfields; i++) {
		const struct mad_field *f = &l->fields[i];
		if (f->type == MF_NESTED) {
			size_t boff = f->bitoff / 8;
			if (mad_layout_encode(f->nested, (const uint8_t *)in + f->off, buf + boff,
			                      len - boff, err) < 0)
				return -1;
			continue;
		}
		encode_field(f, in, buf);
	}
	return 0;
}
