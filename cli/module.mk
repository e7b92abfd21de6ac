# SPDX-License-Identifier: BSD-3-Clause
# cli/: the `treematch` command-line tool.
CLI_SRCS += $(wildcard cli/*.c)
