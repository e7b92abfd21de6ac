# SPDX-License-Identifier: BSD-3-Clause
# affinity/: hwloc node trees, topology.conf, the cluster tree, binding.
LIB_SRCS    += $(wildcard affinity/*.c)
LIB_HEADERS += affinity/affinity.h
TEST_SRCS   += $(wildcard tests/unit/test_affinity_*.c)
