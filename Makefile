# SPDX-License-Identifier: GPL-2.0
#
# vx3 development Makefile (out-of-tree build, static checks, VM tests).
# See README. This file is not part of a kernel tree's kbuild.

SHELL := /bin/bash
PYTHON ?= /usr/bin/python3

VX3_DIR := $(CURDIR)/drivers/net/ethernet/vmware/vx3
DEPS := $(CURDIR)/scripts/vx3-deps.sh

# Guest/module kernel: the target, Debian's newest kernel (7.3 from
# trixie-backports, its build tree made by scripts/vx3-deps.sh). Override
# with KVER=... or KDIR=.... make modules-lts builds vx3 for Debian's 6.12
# LTS kernel into build/lts/vx3/, with the DKMS package's compat layer
# (packaging/compat/vx3_compat.h), as DKMS does.
KVER ?= $(shell $(DEPS) --kver 2>/dev/null)
KDIR ?= /lib/modules/$(KVER)/build
LTS_KVER = $(shell $(DEPS) --lts-kver 2>/dev/null)
LTS_DIR := $(CURDIR)/build/lts/vx3
COMPAT := $(CURDIR)/packaging/compat/vx3_compat.h
export KVER KDIR

.PHONY: all modules modules-lts deps check check-reference static vmtest bench series \
	series-vmxnet3 vmxnet3-patched debug-kernel soak deb clean help

all: modules

# Install missing dependencies (only possible as root; otherwise the script
# prints the apt-get line and fails).
deps:
	@$(DEPS) --check || $(DEPS)

modules:
	@if [ ! -f $(VX3_DIR)/Makefile ]; then \
		echo "vx3 driver not present, skipped"; \
	else \
		if [ ! -e "$(KDIR)/Makefile" ]; then $(DEPS) || exit 1; fi; \
		kdir="$(KDIR)"; \
		[ -e "$$kdir/Makefile" ] || kdir=/lib/modules/$$($(DEPS) --kver)/build; \
		$(MAKE) -C $$kdir M=$(VX3_DIR) CONFIG_VX3=m W=1 modules; \
	fi

# The sources are copied (an M= build writes next to them, and the
# target kernel's build of make modules stays in place).
modules-lts:
	@mkdir -p $(LTS_DIR)
	@for f in $(VX3_DIR)/Makefile $(VX3_DIR)/*.[ch] $(COMPAT); do \
		cmp -s $$f $(LTS_DIR)/$${f##*/} || cp $$f $(LTS_DIR)/; \
	done
	@rm -f $(LTS_DIR)/vx3.mod.c
	@$(CURDIR)/packaging/compat/vx3-compat-prepare.sh \
		/lib/modules/$(LTS_KVER)/build $(LTS_DIR)
	@$(MAKE) -C /lib/modules/$(LTS_KVER)/build M=$(LTS_DIR) CONFIG_VX3=m \
		W=1 KCPPFLAGS="-include $(LTS_DIR)/vx3_compat.h" modules

# deps -> build (if driver present) -> static checks -> VM tests, one summary.
# vx3-check.sh installs missing dependencies itself: first what the debug
# kernel's build needs, which then runs while the rest installs.
check:
	@$(CURDIR)/scripts/vx3-check.sh

# The release lane, run before a release and for the closing note, not in
# every make check (budget): the series' checks with the bisect and i386
# builds (scripts/vx3-series/README), vx3's test files that make check
# leaves out (dkms on 7.3, then again on the lts kernel: each run checks
# that dkms built vx3 for both lines, boots its own with it, and boots
# initramfs-tools images of the package's policy and fallback), a
# seconds-long smoke of make bench (every cell once; the
# numbers are not judged, a cell without numbers or a missing chart
# fails), then the VM
# tests against the in-tree vmxnet3 (the reference) and the patched
# vmxnet3 (scripts/vmxnet3-series/, built first).
VX3_RELEASE_TESTS := intx pm qinq dkms upstream.ping upstream_rss
check-reference: deps
	@$(MAKE) --no-print-directory modules
	@rc=0; \
	$(PYTHON) $(CURDIR)/scripts/vx3-series/series.py check --full \
		--dry-run || rc=1; \
	rm -rf $(CURDIR)/build/bench-smoke; \
	$(PYTHON) $(CURDIR)/tools/testing/selftests/drivers/net/vx3/bench/bench.py \
		--smoke --outdir $(CURDIR)/build/bench-smoke || rc=1; \
	$(PYTHON) $(CURDIR)/tools/testing/selftests/drivers/net/vx3/run.py \
		--driver vx3 --summary \
		$(foreach t,$(VX3_RELEASE_TESTS),-t $(t)) || rc=1; \
	$(PYTHON) $(CURDIR)/tools/testing/selftests/drivers/net/vx3/run.py \
		--driver vx3 --kernel lts --summary -t dkms || rc=1; \
	$(PYTHON) $(CURDIR)/tools/testing/selftests/drivers/net/vx3/run.py \
		--driver vx3 --kernel debug --summary -t xsk.zc_churn \
		-t xsk.zc_resize || rc=1; \
	$(PYTHON) $(CURDIR)/tools/testing/selftests/drivers/net/vx3/run.py \
		--driver vmxnet3 --summary $(VMTEST_ARGS) || rc=1; \
	$(CURDIR)/scripts/vmxnet3-series/patched.sh >/dev/null && \
	$(PYTHON) $(CURDIR)/tools/testing/selftests/drivers/net/vx3/run.py \
		--driver vmxnet3-patched --summary \
		--logdir $(CURDIR)/build/vmtest-patched $(VMTEST_ARGS) || rc=1; \
	exit $$rc

static: deps
	@$(CURDIR)/scripts/vx3-static-check.sh

# Only the VM tests; pass e.g. VMTEST_ARGS="--driver vmxnet3 -t smoke".
vmtest: deps
	@$(PYTHON) $(CURDIR)/tools/testing/selftests/drivers/net/vx3/run.py $(VMTEST_ARGS)

# Benchmarks vx3 vs vmxnet3 (tools/testing/selftests/drivers/net/vx3/bench/),
# with a fourth row for the patched vmxnet3 when make vmxnet3-patched has
# built it (BENCH_ARGS="--patched yes|no" to require or skip it):
# REPS=3 SECONDS=20 PAR=32, other options via BENCH_ARGS="--pin vcpu ...".
bench: deps
	@$(MAKE) --no-print-directory modules
	@$(PYTHON) $(CURDIR)/tools/testing/selftests/drivers/net/vx3/bench/bench.py \
		$(if $(REPS),--reps $(REPS)) $(if $(SECONDS),--seconds $(SECONDS)) \
		$(if $(PAR),--parallel $(PAR)) $(BENCH_ARGS)

# The debug guest kernel (KASAN, lockdep, kmemleak, DMA-API debug, ...),
# cached under /var/cache/vx3/debug-kernel/ (scripts/vx3-debug-kernel.sh),
# and vx3.ko built against it; run.py --kernel debug boots it, e.g.
# make vmtest VMTEST_ARGS="--kernel debug --driver vx3 -t smoke"
debug-kernel: deps
	@$(CURDIR)/scripts/vx3-debug-kernel.sh

# Soak (not in make check): test_churn.py on the debug kernel with the
# reconfiguration churn, integrity transfers and bulk traffic both ways
# running for SOAK_MINUTES (default 30); logs in build/soak/.
SOAK_MINUTES ?= 30
soak: deps
	@$(CURDIR)/scripts/vx3-debug-kernel.sh >/dev/null
	@VX3_CHURN_SECONDS=$$(($(SOAK_MINUTES) * 60)) $(PYTHON) \
		$(CURDIR)/tools/testing/selftests/drivers/net/vx3/run.py \
		--kernel debug --driver vx3 -t churn --summary \
		--case-timeout $$(($(SOAK_MINUTES) * 60 + 900)) \
		--logdir $(CURDIR)/build/soak $(VMTEST_ARGS)

# The Debian package vx3-dkms (packaging/, dh_dkms) as
# build/vx3-dkms_<version>_all.deb, staged under build/deb/. Not after
# deps: on a real host it needs only debhelper, dh-dkms and dkms.
deb:
	@$(CURDIR)/scripts/vx3-deb.sh

# The netdev patch series in build/series/ (scripts/vx3-series/README)
series: deps
	@$(PYTHON) $(CURDIR)/scripts/vx3-series/series.py make

# The patch series against the in-tree vmxnet3 (scripts/vmxnet3-series/):
# git am on vx3-base, build/series-vmxnet3/, NIPA's per-patch checks (TAP,
# logs in build/series-vmxnet3-check/); fails if a patch does not apply or
# a check fails
series-vmxnet3: deps
	@$(PYTHON) $(CURDIR)/scripts/vmxnet3-series/vmxnet3_series.py check

# vmxnet3 of vx3-base with that series, out of tree, as
# build/vmxnet3-patched/<kernelrelease>/vmxnet3.ko for Debian's kernel
# (KVER/KDIR) and the debug kernel if built (run.py --driver vmxnet3-patched)
vmxnet3-patched: deps
	@$(CURDIR)/scripts/vmxnet3-series/patched.sh

clean:
	@if [ -f $(VX3_DIR)/Makefile ] && [ -e "$(KDIR)/Makefile" ]; then \
		$(MAKE) -C $(KDIR) M=$(VX3_DIR) clean; \
	fi
	rm -rf $(CURDIR)/build
	find $(CURDIR)/tools/testing/selftests/drivers/net/vx3 -name __pycache__ \
		-type d -prune -exec rm -rf {} +

help:
	@echo "vx3 targets:"
	@echo "  make [all]      build drivers/net/ethernet/vmware/vx3/vx3.ko (W=1)"
	@echo "                  KDIR=/lib/modules/\$$(uname -r)/build for a real host"
	@echo "  make check      deps, build, static checks (W=1, sparse, checkpatch,"
	@echo "                  kernel-doc) and VM tests; ends with 'N passed, N failed, N skipped'"
	@echo "  make check-reference  vx3's release-lane tests, the VM tests against the"
	@echo "                  in-tree vmxnet3 and the patched vmxnet3"
	@echo "  make static     static checks only"
	@echo "  make vmtest     VM tests only (VMTEST_ARGS='--driver vmxnet3 -t smoke')"
	@echo "  make bench      benchmarks vx3 vs vmxnet3 (REPS= SECONDS= PAR= BENCH_ARGS=)"
	@echo "  make series     the netdev patch series in build/series/ (from series.txt)"
	@echo "  make series-vmxnet3  the vmxnet3 patch series (scripts/vmxnet3-series/) in"
	@echo "                  build/series-vmxnet3/, with NIPA's per-patch checks (TAP)"
	@echo "  make vmxnet3-patched  build/vmxnet3-patched/<kernelrelease>/vmxnet3.ko: vmxnet3"
	@echo "                  with that series, for KVER and the debug kernel if built"
	@echo "  make debug-kernel  build (once, cached in /var/cache/vx3/debug-kernel/) the"
	@echo "                  KASAN/lockdep/kmemleak guest kernel and vx3.ko for it;"
	@echo "                  then VMTEST_ARGS='--kernel debug --driver vx3 -t smoke'"
	@echo "  make deb        build/vx3-dkms_<version>_all.deb (DKMS package, vx3-policy)"
	@echo "  make deps       install missing dependencies (root)"
	@echo "  make clean      remove build products"
	@echo "Kernel: KVER=$(KVER) KDIR=$(KDIR)"
