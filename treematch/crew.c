/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * crew.c - run pieces of work on the CPUs this process may use.
 *
 * The default mapper's candidates are independent: each is made and refined
 * from the same inputs with its own seed, so the result is the same whoever
 * runs them and in whatever order they finish. A crew hands out the pieces
 * on up to `threads` threads (the caller's included): each thread takes the
 * first piece, in the given order, that is not taken, is ready (its inputs
 * are done) and, if exclusive, finds no other exclusive piece running (METIS
 * calls share the C library's random state); it waits when none can start.
 * When a thread cannot be started the others do its share.
 */
#include "treematch/treematch_private.h"

#include <pthread.h>
#include <sched.h>
#include <stdlib.h>

struct crew {
	pthread_mutex_t mu;
	pthread_cond_t changed;
	int n, left, exclusive_running;
	const int *order;
	unsigned char *taken;
	const struct tmatch__crew_ops *ops;
	void *arg;
};

/* The next piece that may start, or -1 (under the lock). */
static int crew_pick(struct crew *c)
{
	for (int i = 0; i < c->n; i++) {
		int p = c->order[i];

		if (c->taken[p] || (c->ops->ready && !c->ops->ready(c->arg, p)))
			continue;
		if (c->ops->exclusive && c->ops->exclusive(c->arg, p) && c->exclusive_running)
			continue;
		return p;
	}
	return -1;
}

static void *crew_worker(void *v)
{
	struct crew *c = v;

	pthread_mutex_lock(&c->mu);
	while (c->left > 0) {
		int p = crew_pick(c), excl;

		if (p < 0) {
			pthread_cond_wait(&c->changed, &c->mu);
			continue;
		}
		excl = c->ops->exclusive && c->ops->exclusive(c->arg, p);
		c->taken[p] = 1;
		c->left--;
		c->exclusive_running |= excl;
		pthread_mutex_unlock(&c->mu);
		c->ops->work(c->arg, p);
		pthread_mutex_lock(&c->mu);
		if (c->ops->done)
			c->ops->done(c->arg, p);
		if (excl)
			c->exclusive_running = 0;
		pthread_cond_broadcast(&c->changed);
	}
	pthread_mutex_unlock(&c->mu);
	return NULL;
}

int tmatch__crew_threads(int max)
{
	cpu_set_t set;
	int k;

	if (max <= 1 || sched_getaffinity(0, sizeof(set), &set) != 0)
		return 1;
	k = CPU_COUNT(&set);
	return k < 1 ? 1 : k < max ? k : max;
}

int tmatch__crew_run(int n, const int *order, const struct tmatch__crew_ops *ops, void *arg,
                     int threads)
{
	struct crew c = {.n = n, .left = n, .order = order, .ops = ops, .arg = arg};
	pthread_t tid[TMATCH__CREW_MAX];
	int started = 0;

	c.taken = calloc((size_t)(n > 0 ? n : 1), 1);
	if (!c.taken)
		return -1;
	pthread_mutex_init(&c.mu, NULL);
	pthread_cond_init(&c.changed, NULL);
	if (threads > TMATCH__CREW_MAX)
		threads = TMATCH__CREW_MAX;
	while (started < threads - 1 && started < n - 1 &&
	       pthread_create(&tid[started], NULL, crew_worker, &c) == 0)
		started++;
	crew_worker(&c);
	for (int i = 0; i < started; i++)
		pthread_join(tid[i], NULL);
	pthread_cond_destroy(&c.changed);
	pthread_mutex_destroy(&c.mu);
	free(c.taken);
	return 0;
}
