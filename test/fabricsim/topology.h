/* Building a fabric: from ibsim/ibnetdiscover net files, or from a generator spec. */
#ifndef FABRICSIM_TOPOLOGY_H
#define FABRICSIM_TOPOLOGY_H

#include "fabric.h"

struct fs_error {
	char msg[512];
};

/* Load an ibsim "net" file or an ibnetdiscover dump. 0, or -1 with "FILE:LINE: what". */
int netfile_load(struct fabric *f, const char *path, struct fs_error *err);
/* The same from a string (tests). */
int netfile_parse(struct fabric *f, const char *name, const char *text, struct fs_error *err);

/* Generate from a spec:
 *   fattree:radix=K,levels=2|3[,hosts=N][,hca-ports=1|2][,missing-switches=N]
 *           [,missing-links=N][,seed=S]
 *   torus:dims=AxB[xC],hosts=N   mesh:dims=AxB[xC],hosts=N
 *   dragonfly:groups=G,routers=A,hosts=P,global=H
 *   random:switches=N,radix=R,hosts=H[,links=L][,seed=S]
 * and, for any of them, port capabilities: speed=SDR..XDR and width=1x..12x (switch ports;
 * default 4xQDR), host-speed= and host-width= (CA ports; default as the switches), and
 * slow-links=N (inter-switch links whose cable carries one speed less), vports=N (every CA
 * port has SR-IOV virtualization with N vports, no VFs yet: "ctl vport add" makes them).
 * GUIDs and names are deterministic from the spec. 0, or -1 with what is wrong. */
int generate(struct fabric *f, const char *spec, struct fs_error *err);

/* The same spec as a YAML mapping: "generator: fattree" plus the generator's keys. */
int generate_yaml(struct fabric *f, const char *path, struct fs_error *err);

/* A spec's host count without building it (for help and benchmarks); 0 if invalid. */
unsigned generate_hosts(const char *spec);

/* Write the fabric as an ibnetdiscover-style net file (loads back with netfile_load). */
int netfile_write(const struct fabric *f, const char *path, struct fs_error *err);

#endif
