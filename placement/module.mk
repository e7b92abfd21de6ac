# SPDX-License-Identifier: BSD-3-Clause
# placement/: from a profile, an allocation and the site's policy to where
# each task runs: the decisions (the policy's grammar is conf/'s).
LIB_SRCS    += $(wildcard placement/*.c)
TEST_SRCS   += $(wildcard tests/unit/test_placement_*.c)

# The launcher formats (placement/launcher.c) run by the real mpirun and
# mpiexec of Open MPI and MPICH, outside Slurm.
CHECK_TARGETS += e2e-launchers
.PHONY: e2e-launchers
e2e-launchers: all
	BUILDDIR=$(abspath $(B)) SRCDIR=$(CURDIR) sh tests/e2e/test_launchers.sh
