/* Link widths and speeds as PortInfo encodes them (IBA vol. 1, 14.2.5.6, up to the
 * extended speeds of XDR), and the IBA rate table of PathRecord, MCMemberRecord and
 * friends: the one place that knows both, for the SM, the SA, the configuration and
 * fabricsim. */
#ifndef IBSMD_MAD_LINK_SPEED_H
#define IBSMD_MAD_LINK_SPEED_H

#include <stdbool.h>
#include <stdint.h>

#include "mad/smp_attrs.h"

/* LinkWidth* bits */
#define LINK_WIDTH_1X  1
#define LINK_WIDTH_4X  2
#define LINK_WIDTH_8X  4
#define LINK_WIDTH_12X 8
#define LINK_WIDTH_2X  16

/* PortInfo AttributeModifier bit 31: the SM reads and writes the extended speeds
 * (SMSupportExtendedSpeeds). Without it an NDR or XDR port shows only what an older SM
 * understands. */
#define PORT_INFO_AM_EXT_SPEEDS 0x80000000u

/* CapabilityMask / CapabilityMask2 bits of the speeds and widths */
#define PORT_CAP_HAS_EXT_SPEEDS (1u << 14)
#define PORT_CAP2_WIDTH_2X      (1u << 4)
#define PORT_CAP2_SPEED_HDR     (1u << 5)
#define PORT_CAP2_SPEED_NDR     (1u << 10)
#define PORT_CAP2_EXT_SPEEDS2   (1u << 11)
#define PORT_CAP2_SPEED_XDR     (1u << 12)

/* LinkSpeedExtEnabled: 31 sets it to LinkSpeedExtSupported */
#define LINK_SPEED_EXT_SET_SUPPORTED 31

/* One lane's signalling, slowest first. A port's speeds as a mask: bit (1 << speed). */
enum link_speed {
	LINK_SDR,
	LINK_DDR,
	LINK_QDR,
	LINK_FDR,
	LINK_EDR,
	LINK_HDR,
	LINK_NDR,
	LINK_XDR,
	LINK_SPEEDS
};

const char *mad_link_speed_name(enum link_speed s); /* "SDR" ... "XDR" */
/* "hdr", "HDR" ... to the speed; -1 if none */
int mad_link_speed_parse(const char *name);
/* One lane's data rate in Mb/s, as the verbs rate table counts it */
uint32_t mad_link_lane_mbps(enum link_speed s);

/* Lanes of one LinkWidth bit (1, 2, 4, 8, 12), 0 if not exactly one known bit */
unsigned mad_link_lanes(uint8_t width);
/* The LinkWidth bit of a lane count, 0 if none */
uint8_t mad_link_width_of_lanes(unsigned lanes);
/* The widest width in a LinkWidth mask (by lanes, not by bit value), 0 if none */
uint8_t mad_link_width_widest(uint8_t mask);

/* A port's speeds from the PortInfo fields, as masks of enum link_speed */
uint16_t mad_link_speeds_supported(const struct mad_port_info *pi);
uint16_t mad_link_speeds_enabled(const struct mad_port_info *pi);
/* The speed the link runs at, LINK_SPEEDS if the port reports none */
enum link_speed mad_link_speed_active(const struct mad_port_info *pi);
/* Fill the active fields for a speed (fabricsim): extended speeds leave LinkSpeedActive at
 * QDR, as hardware does. */
void mad_link_speed_set_active(struct mad_port_info *pi, enum link_speed s);
/* Fill the supported fields (and CapabilityMask bits) from a mask of enum link_speed */
void mad_link_speeds_set_supported(struct mad_port_info *pi, uint16_t mask);

/* Does the link between ports a and b run below what both ends support? The widest width
 * and fastest speed both support in *width and *speed either way. */
bool mad_link_below_best(const struct mad_port_info *a, const struct mad_port_info *b,
                         uint8_t *width, enum link_speed *speed);

/* The IBA rate code of lanes x speed: the largest defined rate not above it. */
uint8_t mad_rate_code(unsigned lanes, enum link_speed s);
/* The rate code of the link the port runs; 0 if it runs none */
uint8_t mad_link_rate(const struct mad_port_info *pi);
/* A rate code's bandwidth in Mb/s; 0 if the code is not defined. Codes do not grow with
 * bandwidth (14 Gb/s is 11, 40 Gb/s is 7): compare rates by this. */
uint32_t mad_rate_mbps(uint8_t code);
/* The nominal Gb/s of a code ("2.5", "10", ... "1600"), NULL if undefined */
const char *mad_rate_name(uint8_t code);
/* A rate code from its nominal Gb/s text; 0 if none */
uint8_t mad_rate_parse(const char *gbps);
/* The defined code next below (dir < 0) or above (dir > 0) by bandwidth; 0 if none */
uint8_t mad_rate_step(uint8_t code, int dir);
/* -1, 0, 1 by bandwidth */
int mad_rate_cmp(uint8_t a, uint8_t b);
/* The largest defined rate code */
#define MAD_RATE_MAX_CODE 25

#endif
