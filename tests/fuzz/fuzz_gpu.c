/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fuzz_gpu.c - libFuzzer harness for the readers of GPU steps a user can
 * reach (placement/gpu.c), on a node of 4 GPUs and 2 cards
 * (fuzz_gpu_node.h). Bit 1 of the first byte picks:
 *   0: Slurm's words, lines of the input: SLURM_STEP_GPUS, a vendor's
 *      list, cgroup.conf's text (its "\n" written "|"), SLURMD_TRES_BIND
 *      (tmatch_place_gpu_step, then tmatch_place_gpu_slurm_bind for 8
 *      tasks): an accepted step holds distinct GPUs of the node, and every
 *      task Slurm would bind gets 1 to the step's count of the step's GPUs;
 *   1: a bindings file (tmatch_place_bindings_read, 8 ranks): when
 *      accepted, every rank's leaf is a real slot, its GPUs and card the
 *      node's; otherwise a message.
 */
#include "placement/gpu.h"
#include "placement/inputs.h"
#include "tests/fuzz/fuzz_gpu_node.h"
#include "tests/fuzz/fuzz_input.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static tmatch_affinity_tree_t *tree;
static tmatch_affinity_devices_t *dev;

static void setup(void)
{
	const char *path = fuzz_gpu_node_file();
	char spec[64];

	snprintf(spec, sizeof(spec), "xml:%s", path);
	tree = tmatch_place_node_tree_load(spec, 8, 1, 1, NULL, NULL);
	unlink(path);
	if (!tree || !(dev = tmatch_affinity_tree_devices(tree, 0, NULL)) || dev->ngpus != 4)
		abort();
}

/* The next line of *p (cut in place), or NULL. */
static char *line(char **p)
{
	char *s = *p, *nl;

	if (!s)
		return NULL;
	if ((nl = strchr(s, '\n'))) {
		*nl = '\0';
		*p = nl + 1;
	} else {
		*p = NULL;
	}
	return s;
}

static void slurm_words(char *text)
{
	char *p = text, *step_gpus = line(&p), *vendor = line(&p), *conf = line(&p),
	     *tres = line(&p);
	tmatch_place_gpu_env_t env = {0};
	tmatch_place_gpu_step_t st;
	tmatch_error_t err;
	int gpus[8 * TMATCH_PLACE_MAX_GPUS], count[8], kind, rc;

	for (char *c = conf; c && *c; c++)
		if (*c == '|')
			*c = '\n';
	env.step_gpus = step_gpus;
	env.cuda = vendor;
	env.cgroup_conf = conf;
	tmatch_error_clear(&err);
	rc = tmatch_place_gpu_step(dev, &env, &st, &err);
	if (rc < 0) {
		if (!err.msg[0])
			abort();
		return;
	}
	if (rc > 0)
		return;
	if (st.ngpus < 1 || st.ngpus > dev->ngpus || (st.relative && !st.constrained))
		abort();
	for (int i = 0; i < st.ngpus; i++)
		if (st.gpu[i] < 0 || st.gpu[i] >= dev->ngpus || (i && st.gpu[i] <= st.gpu[i - 1]) ||
		    st.index[i] != dev->gpu[st.gpu[i]].index)
			abort();
	tmatch_error_clear(&err);
	if (tmatch_place_gpu_slurm_bind(tres, &st, 8, &kind, gpus, count, &err) < 0) {
		if (!err.msg[0])
			abort();
		return;
	}
	if (kind == TMATCH_GPU_BIND_NONE || kind == TMATCH_GPU_BIND_CLOSEST)
		return;
	for (int i = 0; i < 8; i++) {
		if (count[i] < 1 || count[i] > st.ngpus)
			abort();
		for (int j = 0; j < count[i]; j++) {
			int in_step = 0;

			for (int g = 0; g < st.ngpus; g++)
				in_step |= st.gpu[g] == gpus[i * st.ngpus + j];
			if (!in_step)
				abort();
		}
	}
}

static void bindings(const uint8_t *data, size_t size)
{
	const char *path = fuzz_file(data, size);
	tmatch_place_gpu_out_t out;
	tmatch_error_t err;

	tmatch_error_clear(&err);
	if (tmatch_place_bindings_read(path, tree, dev, 8, &out, &err) < 0) {
		if (!err.msg[0])
			abort();
		return;
	}
	for (int r = 0; r < 8; r++) {
		if (!tmatch_affinity_leaf_is_real(tree, out.leaf[r]) || out.ngpus[r] < 0 ||
		    out.ngpus[r] > dev->ngpus || out.nic[r] < -1 || out.nic[r] >= dev->nnics)
			abort();
		for (int j = 0; j < out.ngpus[r]; j++)
			if (out.gpu[r * out.stride + j] < 0 ||
			    out.gpu[r * out.stride + j] >= dev->ngpus)
				abort();
	}
	tmatch_place_gpu_out_free(&out);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text;

	if (!tree)
		setup();
	if (size < 1)
		return 0;
	if (data[0] & 1) {
		bindings(data + 1, size - 1);
		return 0;
	}
	if (!(text = fuzz_text(data, size, 65536)))
		return 0;
	slurm_words(text);
	free(text);
	return 0;
}
