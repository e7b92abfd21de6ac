/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rng.c - xoshiro256** seeded through splitmix64. The state lives in the
 * caller's struct: no globals, same seed -> same sequence everywhere.
 */
#include "treematch/treematch_private.h"

static uint64_t splitmix64(uint64_t *x)
{
	uint64_t z = (*x += 0x9e3779b97f4a7c15ULL);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static inline uint64_t rotl(uint64_t x, int k)
{
	return (x << k) | (x >> (64 - k));
}

void tmatch__rng_seed(tmatch__rng_t *rng, uint64_t seed)
{
	uint64_t x = seed;
	for (int i = 0; i < 4; i++)
		rng->s[i] = splitmix64(&x);
}

uint64_t tmatch__rng_next(tmatch__rng_t *rng)
{
	uint64_t *s = rng->s;
	uint64_t result = rotl(s[1] * 5, 7) * 9;
	uint64_t t = s[1] << 17;

	s[2] ^= s[0];
	s[3] ^= s[1];
	s[1] ^= s[2];
	s[0] ^= s[3];
	s[2] ^= t;
	s[3] = rotl(s[3], 45);
	return result;
}

uint64_t tmatch__rng_below(tmatch__rng_t *rng, uint64_t bound)
{
	/* Reject the top partial block so every value is equally likely. The
	   block starts above UINT64_MAX - (bound - 1): below that, no division
	   is needed to know x is in. */
	uint64_t x;

	if (bound <= 1)
		return 0;
	do
		x = tmatch__rng_next(rng);
	while (x > UINT64_MAX - (bound - 1) && x > UINT64_MAX - (UINT64_MAX % bound + 1) % bound);
	return x % bound;
}
