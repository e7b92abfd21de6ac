/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * topology_conf.c - topology.conf, the network of Slurm's topology plugins
 * before topology.yaml (read by us rather than through slurm_load_topo(),
 * whose API changes between Slurm releases): its Key=Value lines
 * (slurm_kv.c) handed to affinity/'s builder (affinity/network.h), which
 * keeps the switch tree's rules and caps.
 *
 *   # comment
 *   SwitchName=s0 Nodes=n[1-2] LinkSpeed=100       topology/tree
 *   SwitchName=top Switches=s[0-1] \
 *       LinkSpeed=200
 *   BlockName=b1 Nodes=n[1-4]                      topology/block
 *   BlockSizes=4,16
 *   RingName=r0 Nodes=n[1-8]                       topology/ring
 */
#include "conf/conf_private.h"

#include <errno.h>
#include <stdint.h>
#include <string.h>

/* The blocks' sizes of BlockSizes=4,16. */
static int block_sizes(tmatch_affinity_net_t *b, const struct tmatch__kv *kv)
{
	long v[TMATCH_AFFINITY_NET_BLOCK_LEVELS];
	int n = 0;
	const char *p = kv->val;

	for (;;) {
		uint64_t x = 0;
		size_t len = strcspn(p, ",");

		if (n == TMATCH_AFFINITY_NET_BLOCK_LEVELS)
			return tmatch_affinity_net_error(b, EINVAL, kv->vline, kv->vcol,
			                                 "more than %d block sizes",
			                                 TMATCH_AFFINITY_NET_BLOCK_LEVELS);
		if (tmatch_parse_u64(p, len, 1u << 30, &x) < 0 || x == 0)
			return tmatch_affinity_net_error(
			    b, EINVAL, kv->vline, kv->vcol + (int)(p - kv->val),
			    "BlockSizes= takes positive node counts separated by commas, e.g. "
			    "BlockSizes=4,16");
		v[n++] = (long)x;
		p += len;
		if (*p != ',')
			break;
		p++;
	}
	return tmatch_affinity_net_block_sizes(b, v, n, kv->vline, kv->vcol);
}

/* One line of topology.conf into the builder. */
static int conf_line(void *arg, struct tmatch__kv *kv, int n)
{
	tmatch_affinity_net_t *b = arg;
	const struct tmatch__kv *name = NULL, *nodes = NULL, *switches = NULL;
	const char *what = NULL;
	long speed = 1;

	for (int i = 0; i < n; i++) {
		const struct tmatch__kv *k = &kv[i];

		if (tmatch__kv_is(k, "SwitchName") || tmatch__kv_is(k, "BlockName") ||
		    tmatch__kv_is(k, "RingName")) {
			if (name)
				return tmatch_affinity_net_error(b, EINVAL, k->line, k->col,
				                                 "%.*s given twice on one line",
				                                 (int)k->klen, k->key);
			name = k;
		} else if (tmatch__kv_is(k, "Nodes")) {
			nodes = k;
		} else if (tmatch__kv_is(k, "Switches")) {
			switches = k;
		} else if (tmatch__kv_is(k, "LinkSpeed")) {
			uint64_t x = 0;

			if (tmatch_parse_u64(k->val, strlen(k->val), (uint64_t)1 << 40, &x) < 0 ||
			    x == 0)
				return tmatch_affinity_net_error(
				    b, EINVAL, k->vline, k->vcol,
				    "LinkSpeed must be a positive integer");
			speed = (long)x;
		} else if (tmatch__kv_is(k, "BlockSizes")) {
			if (n > 1)
				return tmatch_affinity_net_error(
				    b, EINVAL, k->line, k->col,
				    "BlockSizes= goes on a line of its own");
			return block_sizes(b, k);
		} else {
			return tmatch_affinity_net_error(
			    b, EINVAL, k->line, k->col,
			    "unknown key '%.*s': valid keys are SwitchName, Switches, Nodes, "
			    "LinkSpeed (topology/tree), BlockName, Nodes, BlockSizes "
			    "(topology/block), RingName, Nodes (topology/ring)",
			    (int)(k->klen > 40 ? 40 : k->klen), k->key);
		}
	}
	if (!name)
		return tmatch_affinity_net_error(
		    b, EINVAL, kv[0].line, kv[0].col,
		    "line has no SwitchName=, BlockName=, RingName= or BlockSizes=");
	if (tmatch__kv_is(name, "SwitchName"))
		return tmatch_affinity_net_add_switch(
		    b, name->val, name->vline, name->vcol, nodes ? nodes->val : NULL,
		    nodes ? nodes->vline : 0, nodes ? nodes->vcol : 0,
		    switches ? switches->val : NULL, switches ? switches->vline : 0,
		    switches ? switches->vcol : 0, speed);
	if (switches || speed != 1)
		what = switches ? "Switches=" : "LinkSpeed=";
	if (what)
		return tmatch_affinity_net_error(b, EINVAL, name->line, name->col,
		                                 "%s belongs to SwitchName= lines", what);
	if (tmatch__kv_is(name, "BlockName"))
		return tmatch_affinity_net_add_block(
		    b, name->val, name->vline, name->vcol, nodes ? nodes->val : NULL,
		    nodes ? nodes->vline : 0, nodes ? nodes->vcol : 0);
	return tmatch_affinity_net_add_ring(b, name->val, name->vline, name->vcol,
	                                    nodes ? nodes->val : NULL, nodes ? nodes->vline : 0,
	                                    nodes ? nodes->vcol : 0);
}

tmatch_affinity_conf_t *tmatch__topo_conf_parse(const char *text, const char *file,
                                                const struct tmatch_affinity_slurm_topo *slurm,
                                                tmatch_error_t *err)
{
	tmatch_affinity_net_t *b = tmatch_affinity_net_new(file, 0, err);
	tmatch_affinity_conf_t *conf = NULL;

	if (!b)
		return NULL;
	if (tmatch__kv_read(text, file, 0, conf_line, b, err) < 0)
		goto out;
	if (tmatch_affinity_net_empty(b)) {
		tmatch_error_set(err, EINVAL, file, 0, 0,
		                 "no SwitchName=, BlockName= or RingName= line: the file describes "
		                 "no network");
		goto out;
	}
	conf = tmatch_affinity_net_finish(b, "default", slurm);
out:
	tmatch_affinity_net_free(b);
	return conf;
}
