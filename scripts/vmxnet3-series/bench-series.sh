#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The vmxnet3 series measured patch by patch: for the driver without
# the series built the same way (level 0), the net series as a whole and
# then each net-next patch on top of it, the in-tree vmxnet3 built with
# the series up to there (patched.sh, VMXNET3_PATCHES=N) against the
# driver as it is, in one make bench run each (bench.py --vmxnet3-only:
# the two vmxnet3 rows only, cells interleaved, ratios per repetition).
# Level 0 is the build's own effect: the kernel's vmxnet3.ko comes from
# Debian's build (its compiler), the patched ones from this machine's;
# each level's ratio is to be read against level 0's. On a quiet host
# only: nothing else may run beside it. Numbers, not a test: nothing is
# asserted.
#
# Usage: scripts/vmxnet3-series/bench-series.sh [bench.py options]
#   default options: --exp rx,tx,fwd --reps 3 --seconds 10
#   --p1-seconds 0 --tx-seconds 10 --fwd-seconds 10
#   VX3_BENCH_LEVELS="9 10": only those levels (number of patches
#   applied), e.g. to measure one step again with more repetitions
#   VX3_BENCH_SERIES_OUT=DIR: results there instead (it is emptied)
# Results: build/bench-vmxnet3/<N>/ (results.txt per level) and
# build/bench-vmxnet3/summary.txt (the "vmxnet3 patched / vmxnet3" lines
# of every level).

set -euo pipefail

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
SERIES_DIR=$ROOT/scripts/vmxnet3-series
OUT=${VX3_BENCH_SERIES_OUT:-$ROOT/build/bench-vmxnet3}
KVER=${KVER:-$("$ROOT/scripts/vx3-deps.sh" --kver)}
BENCH=$ROOT/tools/testing/selftests/drivers/net/vx3/bench/bench.py

log() { echo "bench-series: $*" >&2; }

net=("$SERIES_DIR"/net/[0-9][0-9][0-9][0-9]-*.patch)
next=("$SERIES_DIR"/net-next/[0-9][0-9][0-9][0-9]-*.patch)
[ -e "${net[0]}" ] && [ -e "${next[0]}" ] || { log "no patches"; exit 1; }
args=("$@")
[ ${#args[@]} -gt 0 ] || args=(--exp rx,tx,fwd --reps 3 --seconds 10
	--p1-seconds 0 --tx-seconds 10 --fwd-seconds 10)

rm -rf "$OUT"
mkdir -p "$OUT"
summary=$OUT/summary.txt
: >"$summary"
# Levels: none (the build alone), all of net, then each net-next patch
# on top
levels=(0 ${#net[@]})
for i in "${!next[@]}"; do
	levels+=($((${#net[@]} + i + 1)))
done
if [ -n "${VX3_BENCH_LEVELS:-}" ]; then
	for n in $VX3_BENCH_LEVELS; do
		[[ " ${levels[*]} " == *" $n "* ]] ||
			{ log "no level $n (levels: ${levels[*]})"; exit 1; }
	done
	read -r -a levels <<<"$VX3_BENCH_LEVELS"
fi
for n in "${levels[@]}"; do
	if [ "$n" -eq 0 ]; then
		what="no patch: the driver as it is, built as the patched ones"
	elif [ "$n" -le ${#net[@]} ]; then
		what="net 1-${#net[@]}"
	else
		p=${next[$((n - ${#net[@]} - 1))]}
		# the Subject: header, unfolded
		what="net + net-next $((n - ${#net[@]})): $(awk '
			/^Subject: / { s = $0; f = 1; next }
			f && /^[ \t]/ { s = s $0; next }
			f { print s; exit }' "$p" |
			sed 's/^Subject: \[PATCH[^]]*\] //')"
	fi
	log "level $n ($what): building"
	VMXNET3_PATCHES=$n VMXNET3_PATCHED_OUT=$OUT/ko-$n \
		VMXNET3_PATCHED_DEBUG=no "$SERIES_DIR/patched.sh" >/dev/null
	log "level $n: make bench"
	VX3_VMXNET3_PATCHED_KO=$OUT/ko-$n/$KVER/vmxnet3.ko \
		/usr/bin/python3 "$BENCH" --vmxnet3-only "${args[@]}" \
		--outdir "$OUT/$n" >"$OUT/$n.log" 2>&1 ||
		log "level $n: bench.py exited $? (see $OUT/$n.log)"
	{
		echo "== $n patches: $what"
		grep -E "^ *(lro o(n|ff)|Experiment|vmxnet3 patched / vmxnet3)" \
			"$OUT/$n/results.txt" 2>/dev/null || echo "(no results)"
	} >>"$summary"
done
cat "$summary"
