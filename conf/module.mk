# SPDX-License-Identifier: BSD-3-Clause
# conf/: profile format (libyaml) and the configuration grammar.
LIB_SRCS    += $(wildcard conf/*.c)
LIB_HEADERS += conf/profile.h conf/config.h
