/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * record_core.c - the state of the preloadable recorder: per-peer counters,
 * communicator-to-world rank translation (cached on communicators and
 * windows), the outgoing neighbours of virtual topologies and persistent
 * requests. Everything else of the recorder builds on it; it calls none of
 * it (record_profile.c sets it up and tears it down).
 */
#include "profiler/record_private.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct tmatch__state tmatch__st;
__thread int tmatch__in_fortran __attribute__((tls_model("initial-exec")));

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

/* ------------------------------------------------------------------------ */
/* Counters                                                                  */

static int counters_init(struct tmatch__counters *c, int world_size, long dense_max)
{
	memset(c, 0, sizeof *c);
	if (world_size <= dense_max) {
		c->dense = 1;
		c->cap = (uint32_t)world_size;
		c->cells = calloc((size_t)world_size, sizeof *c->cells);
		return c->cells ? 0 : -1;
	}
	c->cap = TMATCH__RECORD_HASH_CAP;
	c->cells = calloc(c->cap, sizeof *c->cells);
	c->keys = malloc(c->cap * sizeof *c->keys);
	if (!c->cells || !c->keys)
		return -1;
	for (uint32_t i = 0; i < c->cap; i++)
		c->keys[i] = -1;
	return 0;
}

static void counters_fini(struct tmatch__counters *c)
{
	free(c->cells);
	free(c->keys);
	memset(c, 0, sizeof *c);
}

static struct tmatch__cell *counters_slot(struct tmatch__counters *c, int world)
{
	if (c->dense)
		return &c->cells[world];
	uint32_t mask = c->cap - 1;
	uint32_t h = ((uint32_t)world * 2654435761u) & mask;
	for (uint32_t probe = 0; probe < c->cap; probe++, h = (h + 1) & mask) {
		int32_t k = __atomic_load_n(&c->keys[h], __ATOMIC_ACQUIRE);
		if (k == world)
			return &c->cells[h];
		if (k == -1) {
			int32_t expect = -1;
			if (__atomic_compare_exchange_n(&c->keys[h], &expect, world, 0,
			                                __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE) ||
			    expect == world)
				return &c->cells[h];
		}
	}
	return NULL;
}

void tmatch__add(enum tmatch__kind kind, int world, uint64_t msgs, uint64_t bytes)
{
	struct tmatch__state *st = &tmatch__st;
	struct tmatch__cell *cell;

	if (world < 0 || world >= st->world_size ||
	    !(cell = counters_slot(&st->kind[kind], world))) {
		__atomic_fetch_add(&st->lost, msgs, __ATOMIC_RELAXED);
		return;
	}
	if (st->atomic) {
		__atomic_fetch_add(&cell->msgs, msgs, __ATOMIC_RELAXED);
		__atomic_fetch_add(&cell->bytes, bytes, __ATOMIC_RELAXED);
	} else {
		/* MPI calls are serialised (thread level < MULTIPLE): plain adds. */
		cell->msgs += msgs;
		cell->bytes += bytes;
	}
}

/* ------------------------------------------------------------------------ */
/* Rank translation, cached on the communicator and in a per-thread slot     */

struct xlat {
	int size;
	int map[]; /* rank -> world rank, -1 if not in MPI_COMM_WORLD */
};

/* Bumped whenever a cached table dies, so per-thread caches never go stale. */
static unsigned xlat_gen;
static __thread MPI_Comm tl_comm;
static __thread struct xlat *tl_xlat;
static __thread unsigned tl_gen; /* xlat_gen + 1 when tl_* is valid, 0 otherwise */

/* Frees the tables of both communicator keyvals (rank maps, neighbour lists). */
static int xlat_delete(MPI_Comm comm, int keyval, void *val, void *extra)
{
	(void)comm;
	(void)keyval;
	(void)extra;
	__atomic_fetch_add(&xlat_gen, 1, __ATOMIC_ACQ_REL);
	free(val);
	return MPI_SUCCESS;
}

static int xlat_win_delete(MPI_Win win, int keyval, void *val, void *extra)
{
	(void)win;
	(void)keyval;
	(void)extra;
	free(val);
	return MPI_SUCCESS;
}

static struct xlat *xlat_of_group(MPI_Group group)
{
	int size = 0;
	struct xlat *x = NULL;
	int *ranks = NULL;

	if (PMPI_Group_size(group, &size) != MPI_SUCCESS || size < 0)
		return NULL;
	x = malloc(sizeof *x + (size_t)size * sizeof(int));
	ranks = malloc(((size_t)size + 1) * sizeof(int));
	if (!x || !ranks)
		goto fail;
	for (int i = 0; i < size; i++)
		ranks[i] = i;
	x->size = size;
	if (PMPI_Group_translate_ranks(group, size, ranks, tmatch__st.world_group, x->map) !=
	    MPI_SUCCESS)
		goto fail;
	for (int i = 0; i < size; i++)
		if (x->map[i] == MPI_UNDEFINED || x->map[i] < 0)
			x->map[i] = -1;
	free(ranks);
	return x;
fail:
	free(ranks);
	free(x);
	return NULL;
}

/*
 * The attribute `keyval` of comm, made by build(comm) the first time. build
 * runs without the lock (it may translate ranks, which takes it); of two
 * threads racing, the first to set the attribute wins.
 */
static void *comm_cached(MPI_Comm comm, int keyval, void *(*build)(MPI_Comm))
{
	void *x = NULL, *made;
	int flag = 0;

	if (PMPI_Comm_get_attr(comm, keyval, &x, &flag) == MPI_SUCCESS && flag)
		return x;
	made = build(comm);
	if (!made)
		return NULL;
	pthread_mutex_lock(&lock);
	if (PMPI_Comm_get_attr(comm, keyval, &x, &flag) == MPI_SUCCESS && flag) {
		free(made);
	} else if (PMPI_Comm_set_attr(comm, keyval, made) == MPI_SUCCESS) {
		x = made;
	} else {
		free(made);
		x = NULL;
	}
	pthread_mutex_unlock(&lock);
	return x;
}

static void *xlat_build(MPI_Comm comm)
{
	struct xlat *x = NULL;
	int inter = 0;
	MPI_Group group;

	if (PMPI_Comm_test_inter(comm, &inter) != MPI_SUCCESS)
		return NULL;
	if ((inter ? PMPI_Comm_remote_group(comm, &group) : PMPI_Comm_group(comm, &group)) !=
	    MPI_SUCCESS)
		return NULL;
	x = xlat_of_group(group);
	PMPI_Group_free(&group);
	return x;
}

static struct xlat *comm_xlat(MPI_Comm comm)
{
	return comm_cached(comm, tmatch__st.comm_keyval, xlat_build);
}

int tmatch__comm_to_world(MPI_Comm comm, int rank)
{
	struct xlat *x;
	unsigned gen;

	if (comm == MPI_COMM_WORLD)
		return rank;
	gen = __atomic_load_n(&xlat_gen, __ATOMIC_ACQUIRE) + 1;
	if (tl_gen == gen && tl_comm == comm) {
		x = tl_xlat;
	} else {
		x = comm_xlat(comm);
		if (!x)
			return -1;
		tl_comm = comm;
		tl_xlat = x;
		tl_gen = gen;
	}
	return rank < x->size ? x->map[rank] : -1;
}

/* ------------------------------------------------------------------------ */
/* Outgoing neighbours of a virtual topology, cached on the communicator     */

static void *nbrs_build(MPI_Comm comm)
{
	int topo = MPI_UNDEFINED, me = 0, n = 0, in = 0, weighted = 0, ok = 0;
	int *src = NULL, *dw = NULL;
	struct tmatch__nbrs *nb;

	if (PMPI_Topo_test(comm, &topo) != MPI_SUCCESS || PMPI_Comm_rank(comm, &me) != MPI_SUCCESS)
		return NULL;
	if (topo == MPI_CART) {
		ok = PMPI_Cartdim_get(comm, &n) == MPI_SUCCESS;
		n *= 2;
	} else if (topo == MPI_GRAPH) {
		ok = PMPI_Graph_neighbors_count(comm, me, &n) == MPI_SUCCESS;
	} else if (topo == MPI_DIST_GRAPH) {
		ok = PMPI_Dist_graph_neighbors_count(comm, &in, &n, &weighted) == MPI_SUCCESS;
	}
	if (!ok || n < 0 || in < 0 || !(nb = calloc(1, sizeof *nb + (size_t)n * sizeof(int))))
		return NULL;
	nb->n = n;
	if (topo == MPI_CART) {
		for (int d = 0; ok && d < n / 2; d++)
			ok = PMPI_Cart_shift(comm, d, 1, &nb->world[2 * d],
			                     &nb->world[2 * d + 1]) == MPI_SUCCESS;
	} else if (topo == MPI_GRAPH) {
		ok = PMPI_Graph_neighbors(comm, me, n, nb->world) == MPI_SUCCESS;
	} else {
		/* sources and weights asked for even when unweighted: simplest for both MPIs */
		src = malloc((2 * (size_t)in + 1) * sizeof *src);
		dw = malloc(((size_t)n + 1) * sizeof *dw);
		ok = src && dw &&
		     PMPI_Dist_graph_neighbors(comm, in, src, src + in, n, nb->world, dw) ==
		         MPI_SUCCESS;
	}
	free(src);
	free(dw);
	if (!ok) {
		free(nb);
		return NULL;
	}
	for (int i = 0; i < n; i++)
		nb->world[i] = nb->world[i] == MPI_PROC_NULL
		                   ? TMATCH__NBR_NULL
		                   : tmatch__comm_to_world(comm, nb->world[i]);
	return nb;
}

const struct tmatch__nbrs *tmatch__comm_neighbors(MPI_Comm comm)
{
	return comm_cached(comm, tmatch__st.nbr_keyval, nbrs_build);
}

int tmatch__win_to_world(MPI_Win win, int rank)
{
	struct xlat *x = NULL;
	int flag = 0;
	MPI_Group group;

	if (rank < 0)
		return -1;
	if (PMPI_Win_get_attr(win, tmatch__st.win_keyval, &x, &flag) != MPI_SUCCESS || !flag) {
		pthread_mutex_lock(&lock);
		if (PMPI_Win_get_attr(win, tmatch__st.win_keyval, &x, &flag) != MPI_SUCCESS ||
		    !flag) {
			x = NULL;
			if (PMPI_Win_get_group(win, &group) == MPI_SUCCESS) {
				x = xlat_of_group(group);
				PMPI_Group_free(&group);
			}
			if (x && PMPI_Win_set_attr(win, tmatch__st.win_keyval, x) != MPI_SUCCESS) {
				free(x);
				x = NULL;
			}
		}
		pthread_mutex_unlock(&lock);
		if (!x)
			return -1;
	}
	return rank < x->size ? x->map[rank] : -1;
}

/* ------------------------------------------------------------------------ */
/* Persistent requests                                                       */

#define PERSIST_BUCKETS 1024

struct persist {
	struct persist *next;
	MPI_Request req;
	struct tmatch__persist_def def;
};

static struct persist *persist_tab[PERSIST_BUCKETS];

static unsigned persist_hash(MPI_Request req)
{
	uint64_t k = 0;
	/* the handle's own bytes: an int (MPICH) or a pointer (Open MPI) */
	memcpy(&k, &req, sizeof(MPI_Request) < sizeof k ? sizeof(MPI_Request) : sizeof k);
	k ^= k >> 17;
	k *= 0x9e3779b97f4a7c15ull;
	return (unsigned)(k >> 40) % PERSIST_BUCKETS;
}

void tmatch__persist_add(MPI_Request req, const struct tmatch__persist_def *def)
{
	unsigned h = persist_hash(req);
	struct persist *p;

	pthread_mutex_lock(&lock);
	for (p = persist_tab[h]; p; p = p->next)
		if (p->req == req)
			break;
	if (!p && (p = malloc(sizeof *p))) {
		p->req = req;
		p->next = persist_tab[h];
		persist_tab[h] = p;
	}
	if (p)
		p->def = *def;
	pthread_mutex_unlock(&lock);
}

int tmatch__persist_find(MPI_Request req, struct tmatch__persist_def *def)
{
	unsigned h = persist_hash(req);
	int found = 0;

	pthread_mutex_lock(&lock);
	for (struct persist *p = persist_tab[h]; p; p = p->next)
		if (p->req == req) {
			if (def)
				*def = p->def;
			found = 1;
			break;
		}
	pthread_mutex_unlock(&lock);
	return found;
}

int tmatch__persist_start(MPI_Request req, struct tmatch__persist_def *def)
{
	if (!tmatch__persist_find(req, def))
		return 0;
	if (def->send && def->rank >= 0)
		tmatch__add(TMATCH__P2P, def->world, 1, def->bytes);
	return 1;
}

void tmatch__persist_forget(MPI_Request req)
{
	unsigned h = persist_hash(req);

	pthread_mutex_lock(&lock);
	for (struct persist **pp = &persist_tab[h]; *pp; pp = &(*pp)->next)
		if ((*pp)->req == req) {
			struct persist *dead = *pp;
			*pp = dead->next;
			free(dead);
			break;
		}
	pthread_mutex_unlock(&lock);
}

static void persist_clear(void)
{
	for (int h = 0; h < PERSIST_BUCKETS; h++)
		while (persist_tab[h]) {
			struct persist *dead = persist_tab[h];
			persist_tab[h] = dead->next;
			free(dead);
		}
}

/* ------------------------------------------------------------------------ */
/* Set up and torn down (record_profile.c)                                   */

int tmatch__core_init(long dense_max)
{
	struct tmatch__state *st = &tmatch__st;
	int rc = 0;

	st->world_group = MPI_GROUP_NULL;
	for (int k = 0; k < TMATCH__NKINDS; k++)
		if (counters_init(&st->kind[k], st->world_size, dense_max) != 0)
			rc = -1;
	if (rc == 0 && PMPI_Comm_group(MPI_COMM_WORLD, &st->world_group) != MPI_SUCCESS) {
		st->world_group = MPI_GROUP_NULL;
		rc = -1;
	}
	if (rc == 0 && (PMPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, xlat_delete,
	                                        &st->comm_keyval, NULL) != MPI_SUCCESS ||
	                PMPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, xlat_delete, &st->nbr_keyval,
	                                        NULL) != MPI_SUCCESS ||
	                PMPI_Win_create_keyval(MPI_WIN_NULL_COPY_FN, xlat_win_delete,
	                                       &st->win_keyval, NULL) != MPI_SUCCESS))
		rc = -1;
	return rc;
}

void tmatch__core_fini(void)
{
	struct tmatch__state *st = &tmatch__st;

	persist_clear();
	if (st->world_group != MPI_GROUP_NULL)
		PMPI_Group_free(&st->world_group);
	for (int k = 0; k < TMATCH__NKINDS; k++)
		counters_fini(&st->kind[k]);
}
