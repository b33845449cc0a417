/* Work spread over the CPUs for routing engines: fn(arg, i) for every i below n, on worker
 * threads. fn must write only what i owns (a source switch's table and loads), so that the
 * result is the same whatever the number of threads. */
#ifndef IBSMD_ROUTING_PARALLEL_H
#define IBSMD_ROUTING_PARALLEL_H

#include <stdint.h>

/* threads 0: the CPUs online, at most 8; 1: the caller's thread alone. */
void routing_parallel(uint32_t n, unsigned threads, void (*fn)(void *arg, uint32_t i), void *arg);

#endif
