/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * crew.c - run independent pieces of work on the CPUs this process may use.
 *
 * The default mapper's candidates are independent: each is made and refined
 * from the same inputs with its own seed, so the result is the same whoever
 * runs them and in whatever order they finish. A crew takes the pieces in a
 * given order, one at a time, on up to `threads` threads (the caller's
 * included); when a thread cannot be started the others do its share.
 */
#include "treematch/treematch_private.h"

#include <pthread.h>
#include <sched.h>

struct crew {
	pthread_mutex_t mu;
	int next, n;
	const int *order;
	void (*work)(void *arg, int piece);
	void *arg;
};

static void *crew_worker(void *p)
{
	struct crew *c = p;

	for (;;) {
		int i;

		pthread_mutex_lock(&c->mu);
		i = c->next < c->n ? c->next++ : -1;
		pthread_mutex_unlock(&c->mu);
		if (i < 0)
			return NULL;
		c->work(c->arg, c->order[i]);
	}
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

void tmatch__crew_run(int n, const int *order, void (*work)(void *arg, int piece), void *arg,
                      int threads)
{
	struct crew c = {.next = 0, .n = n, .order = order, .work = work, .arg = arg};
	pthread_t tid[TMATCH__CREW_MAX];
	int started = 0;

	pthread_mutex_init(&c.mu, NULL);
	if (threads > TMATCH__CREW_MAX)
		threads = TMATCH__CREW_MAX;
	if (threads > n)
		threads = n;
	while (started < threads - 1 && pthread_create(&tid[started], NULL, crew_worker, &c) == 0)
		started++;
	crew_worker(&c);
	for (int i = 0; i < started; i++)
		pthread_join(tid[i], NULL);
	pthread_mutex_destroy(&c.mu);
}
