/* Link widths, speeds and the IBA rate table. The rate codes are the wire's (IBA vol. 1,
 * PathRecord Rate), their bandwidths those the verbs library uses for the same codes. */
#include "mad/link_speed.h"

#include <ctype.h>
#include <string.h>

static const char *const speed_names[LINK_SPEEDS] = {"SDR", "DDR", "QDR", "FDR",
                                                     "EDR", "HDR", "NDR", "XDR"};
/* a lane's nominal rate in tenths of Gb/s, and its data rate in Mb/s */
static const uint32_t lane_tenths[LINK_SPEEDS] = {25, 50, 100, 140, 250, 500, 1000, 2000};
static const uint32_t lane_mbps[LINK_SPEEDS] = {2500,  5000,  10000,  14062,
                                                25781, 53125, 106250, 212500};

const char *mad_link_speed_name(enum link_speed s)
{
	return s < LINK_SPEEDS ? speed_names[s] : "?";
}

int mad_link_speed_parse(const char *name)
{
	for (int s = 0; s < LINK_SPEEDS; s++) {
		const char *a = speed_names[s], *b = name;
		while (*a && *b && toupper((unsigned char)*b) == *a)
			a++, b++;
		if (!*a && !*b)
			return s;
	}
	return -1;
}

uint32_t mad_link_lane_mbps(enum link_speed s)
{
	return s < LINK_SPEEDS ? lane_mbps[s] : 0;
}

unsigned mad_link_lanes(uint8_t width)
{
	switch (width) {
	case LINK_WIDTH_1X: return 1;
	case LINK_WIDTH_2X: return 2;
	case LINK_WIDTH_4X: return 4;
	case LINK_WIDTH_8X: return 8;
	case LINK_WIDTH_12X: return 12;
	default: return 0;
	}
}

uint8_t mad_link_width_of_lanes(unsigned lanes)
{
	switch (lanes) {
	case 1: return LINK_WIDTH_1X;
	case 2: return LINK_WIDTH_2X;
	case 4: return LINK_WIDTH_4X;
	case 8: return LINK_WIDTH_8X;
	case 12: return LINK_WIDTH_12X;
	default: return 0;
	}
}

uint8_t mad_link_width_widest(uint8_t mask)
{
	/* the bit values are not in lane order: 2x (16) came last */
	static const uint8_t by_lanes[] = {LINK_WIDTH_12X, LINK_WIDTH_8X, LINK_WIDTH_4X,
	                                   LINK_WIDTH_2X, LINK_WIDTH_1X};
	for (unsigned i = 0; i < sizeof(by_lanes); i++)
		if (mask & by_lanes[i])
			return by_lanes[i];
	return 0;
}

static uint16_t speeds_mask(uint8_t base, uint8_t ext, uint8_t ext2)
{
	return (uint16_t)((base & 7u) | ((ext & 0xfu) << LINK_FDR) | ((ext2 & 1u) << LINK_XDR));
}

uint16_t mad_link_speeds_supported(const struct mad_port_info *pi)
{
	return speeds_mask(pi->link_speed_supported, pi->link_speed_ext_supported,
	                   pi->link_speed_ext_supported2);
}

uint16_t mad_link_speeds_enabled(const struct mad_port_info *pi)
{
	return speeds_mask(pi->link_speed_enabled, pi->link_speed_ext_enabled,
	                   pi->link_speed_ext_enabled2);
}

enum link_speed mad_link_speed_active(const struct mad_port_info *pi)
{
	if (pi->link_speed_ext_active2 == 1)
		return LINK_XDR;
	switch (pi->link_speed_ext_active) {
	case 1: return LINK_FDR;
	case 2: return LINK_EDR;
	case 4: return LINK_HDR;
	case 8: return LINK_NDR;
	default: break;
	}
	switch (pi->link_speed_active) {
	case 1: return LINK_SDR;
	case 2: return LINK_DDR;
	case 4: return LINK_QDR;
	default: return LINK_SPEEDS;
	}
}

void mad_link_speed_set_active(struct mad_port_info *pi, enum link_speed s)
{
	pi->link_speed_active = s >= LINK_SPEEDS ? 0 : s <= LINK_QDR ? (uint8_t)(1u << s) : 4;
	pi->link_speed_ext_active =
	    s >= LINK_FDR && s <= LINK_NDR ? (uint8_t)(1u << (s - LINK_FDR)) : 0;
	pi->link_speed_ext_active2 = s == LINK_XDR ? 1 : 0;
}

void mad_link_speeds_set_supported(struct mad_port_info *pi, uint16_t mask)
{
	pi->link_speed_supported = mask & 7u;
	pi->link_speed_ext_supported = (mask >> LINK_FDR) & 0xfu;
	pi->link_speed_ext_supported2 = (mask >> LINK_XDR) & 1u;
	pi->capability_mask &= ~PORT_CAP_HAS_EXT_SPEEDS;
	if (mask >> LINK_FDR)
		pi->capability_mask |= PORT_CAP_HAS_EXT_SPEEDS;
	pi->capability_mask2 &= (uint16_t) ~(PORT_CAP2_SPEED_HDR | PORT_CAP2_SPEED_NDR |
	                                     PORT_CAP2_EXT_SPEEDS2 | PORT_CAP2_SPEED_XDR);
	if (mask & (1u << LINK_HDR))
		pi->capability_mask2 |= PORT_CAP2_SPEED_HDR;
	if (mask & (1u << LINK_NDR))
		pi->capability_mask2 |= PORT_CAP2_SPEED_NDR;
	if (mask & (1u << LINK_XDR))
		pi->capability_mask2 |= PORT_CAP2_EXT_SPEEDS2 | PORT_CAP2_SPEED_XDR;
	if (pi->capability_mask2)
		pi->capability_mask |= PORT_CAP_HAS_CAP_MASK2;
}

/* The rate table: nominal tenths of Gb/s, data rate in Mb/s, by code (0 = undefined). */
static const struct {
	uint32_t tenths, mbps;
	const char *name;
} rates[MAD_RATE_MAX_CODE + 1] = {
    [2] = {25, 2500, "2.5"},      [3] = {100, 10000, "10"},        [4] = {300, 30000, "30"},
    [5] = {50, 5000, "5"},        [6] = {200, 20000, "20"},        [7] = {400, 40000, "40"},
    [8] = {600, 60000, "60"},     [9] = {800, 80000, "80"},        [10] = {1200, 120000, "120"},
    [11] = {140, 14062, "14"},    [12] = {560, 56250, "56"},       [13] = {1120, 112500, "112"},
    [14] = {1680, 168750, "168"}, [15] = {250, 25781, "25"},       [16] = {1000, 103125, "100"},
    [17] = {2000, 206250, "200"}, [18] = {3000, 309375, "300"},    [19] = {280, 28125, "28"},
    [20] = {500, 53125, "50"},    [21] = {4000, 425000, "400"},    [22] = {6000, 637500, "600"},
    [23] = {8000, 850000, "800"}, [24] = {12000, 1275000, "1200"}, [25] = {16000, 1700000, "1600"},
};

uint8_t mad_rate_code(unsigned lanes, enum link_speed s)
{
	if (!lanes || s >= LINK_SPEEDS)
		return 0;
	/* 12x XDR (2,400 Gb/s) has no code of its own: the largest below it stands in */
	uint32_t want = lanes * lane_tenths[s], best = 0;
	uint8_t code = 0;
	for (uint8_t c = 0; c <= MAD_RATE_MAX_CODE; c++)
		if (rates[c].tenths && rates[c].tenths <= want && rates[c].tenths > best) {
			best = rates[c].tenths;
			code = c;
		}
	return code;
}

uint8_t mad_link_rate(const struct mad_port_info *pi)
{
	return mad_rate_code(mad_link_lanes(pi->link_width_active), mad_link_speed_active(pi));
}

uint32_t mad_rate_mbps(uint8_t code)
{
	return code <= MAD_RATE_MAX_CODE ? rates[code].mbps : 0;
}

const char *mad_rate_name(uint8_t code)
{
	return code <= MAD_RATE_MAX_CODE ? rates[code].name : NULL;
}

uint8_t mad_rate_parse(const char *gbps)
{
	for (uint8_t c = 0; c <= MAD_RATE_MAX_CODE; c++)
		if (rates[c].name && !strcmp(rates[c].name, gbps))
			return c;
	return 0;
}

uint8_t mad_rate_step(uint8_t code, int dir)
{
	uint32_t at = mad_rate_mbps(code), best = dir < 0 ? 0 : UINT32_MAX;
	uint8_t found = 0;
	for (uint8_t c = 0; c <= MAD_RATE_MAX_CODE; c++) {
		uint32_t m = rates[c].mbps;
		if (!m)
			continue;
		if (dir < 0 ? (m < at && m > best) : (m > at && m < best)) {
			best = m;
			found = c;
		}
	}
	return found;
}

int mad_rate_cmp(uint8_t a, uint8_t b)
{
	uint32_t x = mad_rate_mbps(a), y = mad_rate_mbps(b);
	return x < y ? -1 : x > y;
}

bool mad_link_below_best(const struct mad_port_info *a, const struct mad_port_info *b,
                         uint8_t *width, enum link_speed *speed)
{
	*width = mad_link_width_widest(a->link_width_supported & b->link_width_supported);
	uint16_t both = mad_link_speeds_supported(a) & mad_link_speeds_supported(b);
	*speed = LINK_SDR;
	for (unsigned i = 0; i < LINK_SPEEDS; i++)
		if (both & (1u << i))
			*speed = (enum link_speed)i;
	enum link_speed active = mad_link_speed_active(a);
	if (!both && active < LINK_SPEEDS)
		*speed = active; /* neither end says: the speed it runs is the best known */
	return (*width && mad_link_lanes(a->link_width_active) < mad_link_lanes(*width)) ||
	       (both && active < LINK_SPEEDS && active < *speed);
}
