#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# `make check`: static checks, then VM tests; all results as one TAP stream,
# ending with exactly one line "N passed, N failed, N skipped".
# Extra arguments go to the VM test runner (e.g. --driver vmxnet3 -t smoke).

set -uo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
mkdir -p build
LOG=build/check.log
: >"$LOG"
t0=$(date +%s)

echo "TAP version 13" | tee -a "$LOG"
# 1. Build vx3.ko in place (the VM tests load it).
if [ -f drivers/net/ethernet/vmware/vx3/Makefile ]; then
	if make --no-print-directory modules >build/build.log 2>&1; then
		echo "ok 1 - build vx3.ko" | tee -a "$LOG"
	else
		tail -n 30 build/build.log | sed 's/^/# /' | tee -a "$LOG"
		echo "not ok 1 - build vx3.ko # see build/build.log" | tee -a "$LOG"
		rm -f drivers/net/ethernet/vmware/vx3/vx3.ko
	fi
else
	echo "vx3 driver not present, skipped"
	echo "ok 1 - build vx3.ko # SKIP vx3 driver not present" | tee -a "$LOG"
fi
# 2. Static checks (on a private copy of the sources).
TAP_START=2 scripts/vx3-static-check.sh 2>&1 | tee -a "$LOG"
next=$(($(grep -cE '^(not )?ok [0-9]+' "$LOG") + 1))
/usr/bin/python3 tools/testing/selftests/drivers/net/vx3/run.py \
	--tap-start "$next" "$@" 2>&1 | tee -a "$LOG"
vmrc=${PIPESTATUS[0]}

pass=$(grep -E '^ok [0-9]+' "$LOG" | grep -vc '# SKIP')
skip=$(grep -E '^ok [0-9]+' "$LOG" | grep -c '# SKIP')
fail=$(grep -cE '^not ok [0-9]+' "$LOG")
# A runner that died without printing a result is a failure too.
if [ "$vmrc" -ne 0 ] && [ "$fail" -eq 0 ]; then
	echo "not ok $next vmtest # runner exited with $vmrc" | tee -a "$LOG"
	fail=1
fi
echo "1..$((pass + fail + skip))"
echo "# make check took $(($(date +%s) - t0))s; log in $LOG"
echo "$pass passed, $fail failed, $skip skipped"
[ "$fail" -eq 0 ]
