# SPDX-License-Identifier: BSD-3-Clause
# affinity/: hwloc node trees, topology.conf, the cluster tree, binding.
LIB_SRCS    += $(wildcard affinity/*.c)
