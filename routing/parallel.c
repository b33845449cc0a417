/* Work spread over the CPUs (see parallel.h): a shared counter hands out indexes, so a slow
 * index does not hold the others up. */
#include "routing/parallel.h"

#include <pthread.h>
#include <stdatomic.h>
#include <unistd.h>

#define MAX_THREADS 8

struct job {
	uint32_t n;
	atomic_uint_fast32_t next;
	void (*fn)(void *arg, uint32_t i);
	void *arg;
};

static void *worker(void *p)
{
	struct job *j = p;
	for (;;) {
		uint32_t i = (uint32_t)atomic_fetch_add(&j->next, 1);
		if (i >= j->n)
			return NULL;
		j->fn(j->arg, i);
	}
}

void routing_parallel(uint32_t n, unsigned threads, void (*fn)(void *arg, uint32_t i), void *arg)
{
	if (!threads) {
		long cpus = sysconf(_SC_NPROCESSORS_ONLN);
		threads = cpus > 0 ? (unsigned)cpus : 1;
	}
	if (threads > MAX_THREADS)
		threads = MAX_THREADS;
	if (threads > n)
		threads = n ? n : 1;
	struct job j = {.n = n, .fn = fn, .arg = arg};
	atomic_init(&j.next, 0);
	pthread_t tid[MAX_THREADS];
	unsigned started = 0;
	/* the caller works too: threads - 1 more; one that cannot start leaves its share to
	 * the others */
	for (unsigned k = 1; k < threads; k++)
		if (pthread_create(&tid[started], NULL, worker, &j) == 0)
			started++;
	worker(&j);
	for (unsigned k = 0; k < started; k++)
		pthread_join(tid[k], NULL);
}
