/* OpenSM's torus-2QoS.conf (torus-2QoS.conf(5)), read as it is so that a torus site keeps
 * its file: the torus or mesh it expects (radix and ring or line per dimension), seeds (a
 * switch and the switches one step along each axis from it: the origin and which way each
 * axis points) with their datelines (the origin moved along an axis), and OpenSM's tuning
 * keywords. ibsmd's torus engine honours the shape, the seeds and the datelines
 * (routing/grid.c); portgroup_max_ports and max_changes are OpenSM's limits on its own
 * structures and reports, which ibsmd has not. Parser of outside input: every error names the
 * file and line; fuzzed by test/fuzz/fuzz_routing_files.c. */
#ifndef IBSMD_ROUTING_TORUS_CONF_H
#define IBSMD_ROUTING_TORUS_CONF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define TORUS_CONF_DIMS      3
#define TORUS_CONF_MAX_SEEDS 16
#define TORUS_CONF_MAX_RADIX 4096

struct torus_conf_seed {
	uint64_t from; /* the switch every link of the seed starts at (0: no links given) */
	/* per axis: the switch one step plus, and one step minus, from it (0: not given) */
	uint64_t plus[TORUS_CONF_DIMS], minus[TORUS_CONF_DIMS];
	int32_t dateline[TORUS_CONF_DIMS]; /* the origin moved this far along each axis */
};

struct torus_conf {
	uint16_t radix[TORUS_CONF_DIMS]; /* 1: the axis is not there (a 2D torus) */
	bool ring[TORUS_CONF_DIMS];      /* torus (true) or mesh along each axis */
	unsigned nseeds;
	struct torus_conf_seed seed[TORUS_CONF_MAX_SEEDS];
	/* OpenSM's own limits, kept to be shown; ibsmd's structures have none */
	unsigned portgroup_max_ports, max_changes;
	/* port_order: the order host ports of a destination switch are visited */
	uint8_t port_order[254];
	unsigned nport_order;
};

/* 0 with *c filled, or -1 with why ("NAME:LINE: ..."). */
int torus_conf_parse(const char *text, size_t len, const char *name, struct torus_conf *c,
                     char *why, size_t whylen);
int torus_conf_read(const char *path, struct torus_conf *c, char *why, size_t whylen);

#endif
