# SPDX-License-Identifier: BSD-3-Clause
# conf/: the site's and Slurm's configuration files, read in one place: the
# policy grammar (config.c: plugstack.conf arguments, the admin file, the
# user's --treematch value) and plugstack.conf as Slurm reads it
# (plugstack.c). The decisions taken from them are placement/'s.
LIB_SRCS    += $(wildcard conf/*.c)
LIB_HEADERS += conf/config.h
TEST_SRCS   += $(wildcard tests/unit/test_conf_*.c)
