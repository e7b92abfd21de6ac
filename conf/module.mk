# SPDX-License-Identifier: BSD-3-Clause
# conf/: the site's and Slurm's configuration files, read in one place: the
# policy grammar (config.c: plugstack.conf arguments, the admin file, the
# user's --treematch value), plugstack.conf as Slurm reads it (plugstack.c)
# and Slurm's network files (topology.c: which one; topology_conf.c,
# topology_yaml.c, slurm_conf.c's Topology= keys, slurm_kv.c's Key=Value
# lines), handed to affinity/'s network builder (affinity/network.h). The
# decisions taken from them are placement/'s.
LIB_SRCS    += $(wildcard conf/*.c)
LIB_HEADERS += conf/config.h conf/topology.h
TEST_SRCS   += $(wildcard tests/unit/test_conf_*.c)
