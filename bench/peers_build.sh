#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
#
# peers_build.sh - build the peer mappers `make bench-peers` compares with,
# from source directories given to it, out of tree, offline. Their code
# never enters this repository: give where their sources are.
#
#   sh bench/peers_build.sh PREFIX
#
#   KAHIP_SRC      KaHIP (github KaHIP/KaHIP): libkahip and kaffpa
#   SHAREDMAP_SRC  SharedMap (github KaHIP/SharedMap); needs KAHIP_SRC and
#   MTKAHYPAR_SRC  Mt-KaHyPar (github kahypar/mt-kahypar), for its C header
#   IPM_SRC        KaHIP's integrated process mapping (github
#                  KaHIP/IntegratedProcessMapping): strongmap
#
# A peer whose source is not given, or whose build fails, is left out with
# one line saying why; a peer already built is kept. Build logs go to
# PREFIX/logs. Needs cmake, g++ and an MPI development package (IPM's
# CMakeLists asks for MPI although the mapping tools never use it):
# `sh tests/install-deps.sh --bench`.
#
# SharedMap links Mt-KaHyPar, which it calls only to partition with several
# threads; the bench runs it with one thread (-t 1), where it calls KaHIP's
# kaffpa alone. Mt-KaHyPar's own build clones three more repositories from
# the network, so SharedMap is linked here against a stand-in library with
# Mt-KaHyPar's C interface whose every function stops the program with a
# message: with -t 1 none is ever called, and SharedMap's placements are
# its own. The peers build with -march=native (their own flags): binaries
# for this machine only.
set -u

PREFIX=${1:?usage: peers_build.sh PREFIX}
mkdir -p "$PREFIX/logs" "$PREFIX/build"
PREFIX=$(cd "$PREFIX" && pwd)
JOBS=${JOBS:-2}

# logged NAME CMD...: one build step, its output appended to NAME's log
logged() {
	_log=$PREFIX/logs/$1.log
	shift
	echo "+ $*" >>"$_log"
	"$@" >>"$_log" 2>&1
}

# have NAME VAR: 0 when the source directory in VAR exists, else says why
have() {
	eval "_dir=\${$2:-}"
	[ -n "$_dir" ] && [ -d "$_dir" ] && return 0
	echo "peers: $1 left out: no source (${2}=DIR, a checkout of it)"
	return 1
}

KAHIP_TRIED=
kahip() {
	_i=$PREFIX/kahip _b=$PREFIX/build/kahip
	[ -f "$_i/lib/libkahip.so" ] && [ -x "$_i/bin/kaffpa" ] && return 0
	[ -z "$KAHIP_TRIED" ] || return 1 # said once already
	KAHIP_TRIED=1
	have KaHIP KAHIP_SRC || return 1
	# -DNOMPI=ON: no kaffpaE/ParHIP (the parts that need MPI); PIC because
	# SharedMap links libkahip into a shared library. Only the library and
	# kaffpa are built (not KaHIP's other tools), so they are copied rather
	# than installed.
	if logged kahip cmake -S "$KAHIP_SRC" -B "$_b" -DCMAKE_BUILD_TYPE=Release -DNOMPI=ON \
		-DCMAKE_POSITION_INDEPENDENT_CODE=ON &&
		logged kahip cmake --build "$_b" -j "$JOBS" --target kahip kahip_static kaffpa &&
		mkdir -p "$_i/lib" "$_i/include" "$_i/bin" &&
		cp "$_b/libkahip.so" "$_b/libkahip_static.a" "$_i/lib/" &&
		cp "$KAHIP_SRC/interface/kaHIP_interface.h" "$_i/include/" &&
		cp "$_b/kaffpa" "$_i/bin/"; then
		return 0
	fi
	echo "peers: KaHIP left out: its build failed ($PREFIX/logs/kahip.log)"
	return 1
}

# The stand-in for Mt-KaHyPar (see the header) and the CMake package
# SharedMap's find_package(MtKaHyPar CONFIG) looks for.
mtk_standin() {
	_i=$PREFIX/mt-kahypar-standin
	[ -f "$_i/lib/cmake/MtKaHyPar/MtKaHyParConfig.cmake" ] && return 0
	have Mt-KaHyPar MTKAHYPAR_SRC || return 1
	mkdir -p "$_i/include" "$_i/lib/cmake/MtKaHyPar"
	cp "$MTKAHYPAR_SRC/include/mtkahypar.h" "$MTKAHYPAR_SRC/include/mtkahypartypes.h" \
		"$_i/include/" || return 1
	cat >"$_i/standin.c" <<'EOF'
/* Mt-KaHyPar's C interface as SharedMap uses it: never called with -t 1. */
#include <stdio.h>
#include <stdlib.h>
#include "mtkahypar.h"
#define NOT_HERE { fprintf(stderr, "SharedMap: %s: built without Mt-KaHyPar, "        \
                            "run with -t 1\n", __func__); abort(); }
void mt_kahypar_initialize(const size_t t, const bool i) NOT_HERE
mt_kahypar_context_t *mt_kahypar_context_from_preset(const mt_kahypar_preset_type_t p) NOT_HERE
void mt_kahypar_free_context(mt_kahypar_context_t *c) NOT_HERE
mt_kahypar_status_t mt_kahypar_set_context_parameter(mt_kahypar_context_t *c,
    const mt_kahypar_context_parameter_type_t t, const char *v, mt_kahypar_error_t *e) NOT_HERE
void mt_kahypar_set_partitioning_parameters(mt_kahypar_context_t *c,
    const mt_kahypar_partition_id_t k, const double eps, const mt_kahypar_objective_t o) NOT_HERE
void mt_kahypar_set_seed(const size_t s) NOT_HERE
mt_kahypar_hypergraph_t mt_kahypar_create_graph(const mt_kahypar_context_t *c,
    const mt_kahypar_hypernode_id_t n, const mt_kahypar_hyperedge_id_t m,
    const mt_kahypar_hypernode_id_t *e, const mt_kahypar_hyperedge_weight_t *ew,
    const mt_kahypar_hypernode_weight_t *vw, mt_kahypar_error_t *err) NOT_HERE
void mt_kahypar_free_hypergraph(mt_kahypar_hypergraph_t h) NOT_HERE
mt_kahypar_hypernode_id_t mt_kahypar_num_hypernodes(mt_kahypar_hypergraph_t h) NOT_HERE
mt_kahypar_partitioned_hypergraph_t mt_kahypar_partition(mt_kahypar_hypergraph_t h,
    const mt_kahypar_context_t *c, mt_kahypar_error_t *e) NOT_HERE
void mt_kahypar_get_partition(const mt_kahypar_partitioned_hypergraph_t p,
    mt_kahypar_partition_id_t *part) NOT_HERE
void mt_kahypar_free_partitioned_hypergraph(mt_kahypar_partitioned_hypergraph_t p) NOT_HERE
EOF
	logged sharedmap cc -O2 -shared -fPIC -I"$_i/include" -o "$_i/lib/libmtkahypar.so" \
		"$_i/standin.c" || return 1
	cat >"$_i/lib/cmake/MtKaHyPar/MtKaHyParConfig.cmake" <<EOF
# written by slurm-treematch's bench/peers_build.sh: a stand-in, not Mt-KaHyPar
add_library(MtKaHyPar::mtkahypar SHARED IMPORTED)
set_target_properties(MtKaHyPar::mtkahypar PROPERTIES
  IMPORTED_LOCATION "$_i/lib/libmtkahypar.so" IMPORTED_NO_SONAME TRUE
  INTERFACE_INCLUDE_DIRECTORIES "$_i/include")
EOF
}

sharedmap() {
	_i=$PREFIX/sharedmap _s=$PREFIX/build/sharedmap-src _b=$PREFIX/build/sharedmap
	[ -x "$_i/bin/SharedMap" ] && return 0
	have SharedMap SHAREDMAP_SRC || return 1
	kahip || { echo "peers: SharedMap left out: it needs KaHIP"; return 1; }
	mtk_standin || { echo "peers: SharedMap left out: it needs Mt-KaHyPar's header"; return 1; }
	# (sh functions share their variables: kahip and mtk_standin set _i too)
	_i=$PREFIX/sharedmap _s=$PREFIX/build/sharedmap-src _b=$PREFIX/build/sharedmap
	# SharedMap finds its dependencies at <source>/extern/local only: a
	# copy of its sources with those two entries pointing here.
	rm -rf "$_s" "$_b"
	mkdir -p "$_s"
	cp -a "$SHAREDMAP_SRC/." "$_s/"
	mkdir -p "$_s/extern/local"
	ln -sfn "$PREFIX/kahip" "$_s/extern/local/kahip"
	ln -sfn "$PREFIX/mt-kahypar-standin" "$_s/extern/local/mt-kahypar"
	if logged sharedmap cmake -S "$_s" -B "$_b" -DCMAKE_BUILD_TYPE=Release \
		-DCMAKE_EXE_LINKER_FLAGS="-Wl,-rpath,$PREFIX/kahip/lib:$PREFIX/mt-kahypar-standin/lib" &&
		logged sharedmap cmake --build "$_b" -j "$JOBS" --target SharedMap &&
		mkdir -p "$_i/bin" && cp "$_b/SharedMap" "$_i/bin/"; then
		return 0
	fi
	echo "peers: SharedMap left out: its build failed ($PREFIX/logs/sharedmap.log)"
	return 1
}

ipm() {
	_i=$PREFIX/ipm _b=$PREFIX/build/ipm
	[ -x "$_i/bin/strongmap" ] && return 0
	have IPM IPM_SRC || return 1
	if logged ipm cmake -S "$IPM_SRC" -B "$_b" -DCMAKE_BUILD_TYPE=Release \
		-DCMAKE_INSTALL_PREFIX="$_i" &&
		logged ipm cmake --build "$_b" -j "$JOBS" && logged ipm cmake --install "$_b"; then
		return 0
	fi
	echo "peers: IPM left out: its build failed ($PREFIX/logs/ipm.log)"
	return 1
}

kahip && echo "peers: built $PREFIX/kahip/bin/kaffpa"
sharedmap && echo "peers: built $PREFIX/sharedmap/bin/SharedMap (Mt-KaHyPar stand-in: -t 1 only)"
ipm && echo "peers: built $PREFIX/ipm/bin/strongmap"
exit 0
