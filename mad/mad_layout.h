/* Table-driven MAD attribute codec.
 *
 * An attribute is described once, as a table of fields that maps wire bits to members of a
 * host struct (fixed-width integers, host byte order). The same table drives decode, encode,
 * the bounds check and the unit tests. A field is either a libibmad field (enum MAD_FIELDS,
 * encoded by mad_get_field/mad_set_field and friends) or, where libibmad has no field or a wrong
 * one, a hand-described bit range in the spec's numbering (bit 0 is the MSB of byte 0).
 */
#ifndef IBSMD_MAD_LAYOUT_H
#define IBSMD_MAD_LAYOUT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct mad_error {
	char msg[192];
};

void mad_error_set(struct mad_error *err, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

enum mad_ftype {
	MF_U8 = 1,
	MF_U16,
	MF_U32,
	MF_U64,
	MF_BYTES,  /* byte string, byte aligned; length in .bytes */
	MF_TEXT,   /* like MF_BYTES, but printed as text (NodeDescription, ServiceName) */
	MF_NESTED, /* another layout at byte offset bitoff / 8 */
};

struct mad_layout;

struct mad_field {
	const char *name;
	int ibf;         /* libibmad enum MAD_FIELDS, or 0 for a hand-described field */
	uint16_t bitoff; /* hand-described fields and nested layouts */
	uint16_t bitlen; /* hand-described fields */
	uint16_t count;  /* >1: an array of count elements, stride bits apart */
	uint16_t stride;
	uint16_t bytes; /* MF_BYTES: length of the byte string */
	uint8_t type;
	uint16_t off; /* offsetof() the member in the host struct */
	const struct mad_layout *nested;
};

struct mad_layout {
	const char *name;
	uint16_t size;      /* bytes on the wire */
	uint16_t host_size; /* sizeof the host struct */
	uint16_t nfields;
	const struct mad_field *fields;
};

/* Both return 0, or -1 with err (may be NULL) saying what was wrong. Neither reads nor writes
 * past len. decode zeroes *out first. encode writes only the bits of described fields. */
int mad_layout_decode(const struct mad_layout *l, const uint8_t *buf, size_t len, void *out,
                      struct mad_error *err);
int mad_layout_encode(const struct mad_layout *l, const void *in, uint8_t *buf, size_t len,
                      struct mad_error *err);

/* Print a decoded struct field by field: "name: value" lines (indented by indent), or one JSON
 * object. GIDs print as IPv6-style text, text fields as strings. */
void mad_layout_print(const struct mad_layout *l, const void *host, FILE *out, int indent);
void mad_layout_print_json(const struct mad_layout *l, const void *host, FILE *out);

/* Big-endian bit-range access in the spec's numbering, for hand-described fields. */
uint64_t mad_bits_get(const uint8_t *buf, unsigned bitoff, unsigned bitlen);
void mad_bits_set(uint8_t *buf, unsigned bitoff, unsigned bitlen, uint64_t val);

/* Helpers for building field tables. */
#define MAD_F(st, member, ftype, ibfield)                                                          \
	{                                                                                          \
		.name = #member, .ibf = (ibfield), .type = (ftype), .off = offsetof(st, member)    \
	}
#define MAD_FB(st, member, ibfield)                                                                \
	{                                                                                          \
		.name = #member, .ibf = (ibfield), .type = MF_BYTES, .off = offsetof(st, member),  \
		.bytes = sizeof(((st *)0)->member)                                                 \
	}
/* Hand-described: libibmad has no (correct) field for it. */
#define MAD_H(st, member, ftype, boff, blen)                                                       \
	{                                                                                          \
		.name = #member, .type = (ftype), .off = offsetof(st, member), .bitoff = (boff),   \
		.bitlen = (blen)                                                                   \
	}
#define MAD_HA(st, member, ftype, boff, blen, cnt, strd)                                           \
	{                                                                                          \
		.name = #member, .type = (ftype), .off = offsetof(st, member), .bitoff = (boff),   \
		.bitlen = (blen), .count = (cnt), .stride = (strd)                                 \
	}
#define MAD_HB(st, member, boff)                                                                   \
	{                                                                                          \
		.name = #member, .type = MF_BYTES, .off = offsetof(st, member), .bitoff = (boff),  \
		.bytes = sizeof(((st *)0)->member)                                                 \
	}
#define MAD_N(st, member, layout, byteoff)                                                         \
	{                                                                                          \
		.name = #member, .type = MF_NESTED, .off = offsetof(st, member),                   \
		.bitoff = (byteoff)*8, .nested = &(layout)                                         \
	}

#define MAD_LAYOUT(var, st, wire_size, table)                                                      \
	const struct mad_layout var = {.name = #st,                                                \
	                               .size = (wire_size),                                        \
	                               .host_size = sizeof(struct st),                             \
	                               .nfields = sizeof(table) / sizeof((table)[0]),              \
	                               .fields = (table)}

/* Typed wrappers: prefix_decode()/prefix_encode() for struct type. */
#define MAD_CODEC_DECLARE(prefix, type)                                                            \
	extern const struct mad_layout prefix##_layout;                                            \
	int prefix##_decode(const uint8_t *buf, size_t len, struct type *out,                      \
	                    struct mad_error *err);                                                \
	int prefix##_encode(const struct type *in, uint8_t *buf, size_t len, struct mad_error *err)

#define MAD_CODEC_DEFINE(prefix, type)                                                             \
	int prefix##_decode(const uint8_t *buf, size_t len, struct type *out,                      \
	                    struct mad_error *err)                                                 \
	{                                                                                          \
		return mad_layout_decode(&prefix##_layout, buf, len, out, err);                    \
	}                                                                                          \
	int prefix##_encode(const struct type *in, uint8_t *buf, size_t len,                       \
	                    struct mad_error *err)                                                 \
	{                                                                                          \
		return mad_layout_encode(&prefix##_layout, in, buf, len, err);                     \
	}

#endif
