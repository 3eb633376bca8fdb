#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""Run the vx3 VM tests; prints TAP.

    run.py [--driver vx3|vmxnet3|vmxnet3-patched|all] [-t smoke[.case]]
           [--variant default]
           [--kernel stock|lts|debug] [--tap-start N] [--summary] [--list]

One VM is booted per test file, driver and variant; the file's cases run in
order in it. After every case the guest dmesg and QEMU's guest_errors log
are scanned (lib.vm.LogScanner); QEMU exiting fails the case and the rest
of the file.

The guest kernel (--kernel or VX3_KERNEL) is Debian's newest, the target
(stock: 7.3 from trixie-backports, unpacked by scripts/vx3-deps.sh), or
Debian's 6.12 LTS line (lts: installed; vx3.ko built by make modules-lts
with the DKMS package's compat layer, packaging/compat/), or the debug
kernel. --kernel debug (or VX3_KERNEL=debug) boots the debug kernel built by
`make debug-kernel` (scripts/vx3-debug-kernel.sh: KASAN, lockdep, kmemleak,
DMA-API debugging, ...) with an initramfs from its module tree and a vx3.ko
built against it; names and log dirs get the prefix "debug.", guest command
and case timeouts are multiplied (--timeout-scale), and after each file the
driver is unloaded and kmemleak scanned (case "unload_kmemleak").

--driver vmxnet3-patched runs vmxnet3's tests on the in-tree driver with the
series of scripts/vmxnet3-series/ applied (make vmxnet3-patched); "all" is
vx3 and the in-tree vmxnet3.
"""

import argparse
import fcntl
import importlib.util
import inspect
import os
import subprocess
import sys
import time
import traceback
import types

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "../../../../../.."))
sys.path.insert(0, HERE)

from lib import vm as vmlib  # noqa: E402
from lib.test import Ctx, Skip, CaseTimeout  # noqa: E402

DRIVERS = ("vmxnet3", "vx3")
# --driver vmxnet3-patched: the in-tree driver with scripts/vmxnet3-series/
# applied (make vmxnet3-patched builds it per kernel release). Its tests are
# vmxnet3's (ctx.driver "vmxnet3", ctx.patched True), on an initramfs of
# its own in which that module replaces the kernel's vmxnet3.ko.
PATCHED = "vmxnet3-patched"
PATCHED_KO = os.path.join(ROOT, "build/vmxnet3-patched/{kver}/vmxnet3.ko")
# A file may name the guest kernels it applies to (KERNELS = ("debug",) for
# fault injection, which Debian's kernel does not have).
KERNELS = ("stock", "lts", "debug")
DEBUG_KERNEL_SH = os.path.join(ROOT, "scripts/vx3-debug-kernel.sh")
# Guest command/case timeout factor on the debug kernel (KASAN, lockdep,
# kmemleak under TCG); VX3_DEBUG_TIMEOUT_SCALE or --timeout-scale override.
DEBUG_TIMEOUT_SCALE = 3.0
KMEMLEAK = "/sys/kernel/debug/kmemleak"
# VX3_KO=path tests another build of the module (e.g. an older one)
VX3_KO = os.environ.get("VX3_KO") or \
    os.path.join(ROOT, "drivers/net/ethernet/vmware/vx3/vx3.ko")


def split_variants(filters):
    """"-t smoke@default": the file's cases in that boot variant only.
    Returns the filters without the suffixes and {file: (variants)}."""
    names, only = [], {}
    for f in filters:
        name, _, variant = f.partition("@")
        names.append(name)
        if variant:
            if variant not in vmlib.VARIANTS:
                raise SystemExit(f"run.py: no boot variant {variant!r}")
            only.setdefault(name.split(".")[0], []).append(variant)
    return names, {k: tuple(v) for k, v in only.items()}


def discover(filters):
    tests = []
    for fn in sorted(os.listdir(HERE)):
        if not (fn.startswith("test_") and fn.endswith(".py")):
            continue
        name = fn[5:-3]
        spec = importlib.util.spec_from_file_location(f"vx3test_{name}",
                                                      os.path.join(HERE, fn))
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
        cases = [f for n, f in inspect.getmembers(mod, inspect.isfunction)
                 if n.startswith("test_") and f.__module__ == mod.__name__]
        cases.sort(key=lambda f: inspect.unwrap(f).__code__.co_firstlineno)
        sel = []
        for c in cases:
            cname = c.__name__[5:]
            if not filters or name in filters or f"{name}.{cname}" in filters:
                sel.append(c)
        if sel:
            tests.append((name, mod, sel))
    return tests


class Tap:
    def __init__(self, start):
        self.n = start
        self.counts = {"pass": 0, "fail": 0, "skip": 0}

    def diag(self, text):
        for line in str(text).rstrip().splitlines():
            print(f"# {line}")

    def result(self, ok, name, directive=""):
        if directive.startswith("SKIP"):
            self.counts["skip"] += 1
        elif ok:
            self.counts["pass"] += 1
        else:
            self.counts["fail"] += 1
        line = f"{'ok' if ok else 'not ok'} {self.n} {name}"
        if directive:
            line += f" # {directive}"
        print(line, flush=True)
        self.n += 1


def one_line(msg):
    first = str(msg).strip().splitlines()
    return first[0][:150] if first else "failed"


class Kernel:
    """The guest kernel: Debian's newest (stock, default), Debian's 6.12
    LTS (lts) or the debug build."""

    def __init__(self, args):
        self.name = args.kernel
        self.debug = args.kernel == "debug"
        self.image = None		# None: vmlib.guest_image(kver)
        self.modroot = None		# None: vmlib.guest_modroot(kver)
        self.scale = 1.0
        self.vx3_ko = VX3_KO
        if self.name == "lts":
            self.kver = vmlib.lts_kver()
            self.vx3_ko = os.environ.get("VX3_KO") or \
                os.path.join(ROOT, "build/lts/vx3/vx3.ko")
            if os.path.isfile(os.path.join(ROOT, "drivers/net/ethernet/"
                                                 "vmware/vx3/Makefile")):
                # make check's jobs start several runners at once: one
                # build at a time (two makes in build/lts/ break each other)
                os.makedirs(os.path.join(ROOT, "build"), exist_ok=True)
                with open(os.path.join(ROOT, "build/lts.lock"), "w") as lk:
                    fcntl.flock(lk, fcntl.LOCK_EX)
                    subprocess.check_call(["make", "-s",
                                           "--no-print-directory", "-C",
                                           ROOT, "modules-lts"])
            return
        if not self.debug:
            self.kver = vmlib.kver()
            return
        try:
            d = subprocess.check_output([DEBUG_KERNEL_SH, "--path"],
                                        text=True).strip()
        except subprocess.CalledProcessError:
            raise SystemExit("run.py: the debug kernel is not built: "
                             "run `make debug-kernel` first")
        with open(os.path.join(d, "kernelrelease")) as f:
            self.kver = f.read().strip()
        self.image = os.path.join(d, "bzImage")
        self.modroot = os.path.join(d, "modroot")
        self.scale = args.timeout_scale or float(
            os.environ.get("VX3_DEBUG_TIMEOUT_SCALE", DEBUG_TIMEOUT_SCALE))
        # vx3.ko against the debug tree, rebuilt if the sources changed
        # (the stock build in drivers/.../vx3/ is left alone).
        self.vx3_ko = os.path.join(d, "vx3/vx3.ko")
        if os.path.isfile(os.path.join(ROOT, "drivers/net/ethernet/vmware/"
                                             "vx3/Makefile")):
            out = subprocess.check_output([DEBUG_KERNEL_SH, "--module"],
                                          text=True).strip()
            if out:
                self.vx3_ko = out.splitlines()[-1]

    def vm_args(self):
        """Extra lib.vm.VM() arguments."""
        if not self.debug:
            return {}
        return {"kernel": self.image, "timeout_scale": self.scale,
                "boot_timeout": int(300 * self.scale), "kasan": True}


def kmemleak_after_unload(tap, vm, driver, scanner, name, logdir):
    """Debug kernel, after a file's cases: rmmod the driver, scan kmemleak
    twice (a first scan can miss references still in flight) and fail if
    it reports anything; also fail on dmesg splats of the unload."""
    t0 = time.monotonic()
    problems = []
    try:
        rc, out = vm.run(f"if grep -q '^{driver} ' /proc/modules; then "
                         f"rmmod {driver}; fi", timeout=120)
        if rc != 0:
            problems.append(f"rmmod {driver} failed (rc={rc}):\n{out}")
        rc, out = vm.run(f"test -e {KMEMLEAK}")
        if rc != 0:
            problems.append(f"no {KMEMLEAK} (kmemleak disabled?)")
        else:
            for _ in range(2):
                vm.check(f"echo scan > {KMEMLEAK}", timeout=300)
            report = vm.check(f"cat {KMEMLEAK}", timeout=120)
            if report.strip():
                with open(os.path.join(logdir, "kmemleak.txt"), "w") as f:
                    f.write(report)
                n = report.count("unreferenced object")
                problems.append(f"kmemleak: {n} unreferenced object(s) after "
                                f"rmmod {driver} (kmemleak.txt):\n"
                                + report.rstrip())
    except vmlib.VMError as e:
        problems.append(f"unload/kmemleak check failed: {e}")
    problems += scanner.scan()
    dt = time.monotonic() - t0
    if problems:
        tap.diag("\n".join(problems))
        tap.result(False, name, f"{one_line(problems[0])} ({dt:.0f}s)")
    else:
        tap.diag(f"{name}: rmmod {driver} + 2 kmemleak scans: clean "
                 f"({dt:.0f}s)")
        tap.result(True, name)


def start_vm(tap, vm, prefix):
    """Boot vm; once more (a new VM) if the first boot died of the TCG
    int3 artefact before any driver was loaded (lib.vm.tcg_boot_artefact)
    or hung before the guest's /init started the agent
    (lib.vm.boot_stall_artefact). The first console log is kept as
    console-boot1.log. Returns the VM that booted."""
    try:
        vm.start()
        return vm
    except vmlib.VMError as e:
        try:
            with open(vm.console_log, errors="replace") as f:
                text = f.read()
        except OSError:
            text = ""
        if vmlib.tcg_boot_artefact(text):
            why = "died of the TCG int3 artefact before any driver was loaded"
        elif vmlib.boot_stall_artefact(e, text):
            why = (f"hung (console silent {vmlib.BOOT_STALL_S}s) before the "
                   f"guest's /init started the agent")
        else:
            raise
        vm.close()
    os.replace(vm.console_log, os.path.join(vm.logdir, "console-boot1.log"))
    tap.diag(f"{prefix}: boot {why} (console-boot1.log); booting once more")
    again = same_vm(vm)
    again.start()
    return again


def same_vm(vm):
    """A new VM (not started) like vm, in the same log directory."""
    return vmlib.VM(vm.kver, vm.initrd, nics=vm.nics, variant=vm.variant,
                    logdir=vm.logdir, append=vm.extra_append,
                    kernel=vm.kernel, timeout_scale=vm.timeout_scale,
                    boot_timeout=vm.boot_timeout, root_ports=vm.root_ports,
                    host_root=vm.host_root, bridge_nics=vm.bridge_nics,
                    qemu=vm.qemu, kasan=vm.kasan, accel=vm.accel)


def kmemleak_clear_boot(tap, vm, prefix):
    """Debug kernel: boot-time kmemleak suspects are not the driver's:
    scan once and clear them, so that the check after rmmod sees only
    what leaked during the test file."""
    t1 = time.monotonic()
    rc, out = vm.run(f"echo scan > {KMEMLEAK} && echo clear > {KMEMLEAK}",
                     timeout=300)
    tap.diag(f"{prefix}: boot-time kmemleak scan+clear "
             f"(rc={rc}, {time.monotonic() - t1:.0f}s) {out.strip()}")


def vm_for_retry(tap, vm, ctx, mod, prefix, debug, case_timeout):
    """After a FirmwareArtefact: stop vm (its console and guest errors logs
    are kept with the suffix -attempt1), boot a new one like it, run the
    file's setup() on it and make it ctx.vm. Returns the new VM."""
    vm.close()
    for log in (vm.console_log, vm.guest_errors_log):
        root, ext = os.path.splitext(log)
        if os.path.exists(log):
            os.replace(log, f"{root}-attempt1{ext}")
    vm = start_vm(tap, same_vm(vm), prefix)
    tap.diag(f"{prefix}: guest up in {vm.boot_time:.1f}s")
    ctx.vm = vm
    if debug:
        kmemleak_clear_boot(tap, vm, prefix)
    setup = getattr(mod, "setup", None)
    if setup is not None:
        with CaseTimeout(case_timeout):
            setup(ctx)
    return vm


def run_file(tap, args, name, mod, cases, driver, variant, initrd, kern,
             have_vx3):
    kv = kern.kver
    prefix = f"{driver}.{variant}.{name}" if variant != "default" \
        else f"{driver}.{name}"
    patched = driver == PATCHED
    if patched:
        driver = "vmxnet3"
    if kern.name != "stock":
        prefix = f"{kern.name}.{prefix}"
    # A file whose cases take longer names its own (CASE_TIMEOUT)
    case_timeout = int(max(args.case_timeout,
                           getattr(mod, "CASE_TIMEOUT", 0)) * kern.scale)
    allowed = getattr(mod, "DRIVERS", DRIVERS)
    skip = None
    if driver not in allowed:
        skip = f"test does not apply to {driver}"
    elif kern.name not in getattr(mod, "KERNELS", KERNELS):
        skip = f"needs the {' or '.join(mod.KERNELS)} kernel"
    elif driver == "vx3" and not have_vx3:
        skip = "vx3.ko not built"
    if skip:
        for c in cases:
            tap.result(True, f"{prefix}.{c.__name__[5:]}", f"SKIP {skip}")
        return

    logdir = os.path.join(args.logdir, f"{prefix}")
    # A file may prepare the host before its VM boots and bring its own
    # initramfs: initrd = mod.host_setup(host) (None: the shared one);
    # mod.host_teardown(host) runs after the VM is gone, also on failure.
    # test_dkms.py installs the vx3-dkms package this way. The cases see
    # the namespace as ctx.host.
    host = types.SimpleNamespace(kver=kv, logdir=logdir, initrd=initrd,
                                 root=ROOT, kernel=kern, state={})
    t_file = time.monotonic()
    times = []
    if hasattr(mod, "host_setup"):
        skip = err = None
        try:
            initrd = mod.host_setup(host) or initrd
        except Skip as e:
            skip = e
        except Exception as e:  # noqa: BLE001
            err = e
            tap.diag(f"{prefix}: host_setup failed:\n"
                     f"{traceback.format_exc()}")
        except BaseException:		# SIGINT, SIGTERM, SIGHUP
            _host_teardown(tap, mod, host, prefix)
            raise
        if skip or err:
            _host_teardown(tap, mod, host, prefix)
            for c in cases:
                tap.result(skip is not None, f"{prefix}.{c.__name__[5:]}",
                           f"SKIP {skip}" if skip else
                           f"host setup failed: {one_line(err)}")
            return
    # A file that needs the device model fixes of scripts/qemu/patches/
    # (QEMU_PATCHED) boots the rig's own QEMU build
    qemu = None
    if getattr(mod, "QEMU_PATCHED", False):
        try:
            qemu = vmlib.qemu_patched()
        except (OSError, subprocess.CalledProcessError) as e:
            _host_teardown(tap, mod, host, prefix)
            for c in cases:
                tap.result(False, f"{prefix}.{c.__name__[5:]}",
                           f"no patched QEMU (scripts/vx3-qemu.sh): "
                           f"{one_line(e)}")
            return
    vm = vmlib.VM(kv, initrd, nics=getattr(mod, "NICS", 1), variant=variant,
                  logdir=logdir, append=getattr(mod, "APPEND", ""),
                  root_ports=getattr(mod, "ROOT_PORTS", False),
                  # test_upstream.py: the host's / over virtio-9p, the
                  # NICs' taps on one host bridge (lib/vm.py)
                  host_root=getattr(mod, "HOST_ROOT", False),
                  bridge_nics=getattr(mod, "BRIDGE_NICS", False),
                  qemu=qemu, **kern.vm_args())
    tap.diag(f"{prefix}: booting VM {vm.runid} (logs in "
             f"{os.path.relpath(logdir, ROOT)})")
    try:
        try:
            vm = start_vm(tap, vm, prefix)
        except vmlib.VMError as e:
            for c in cases:
                tap.result(False, f"{prefix}.{c.__name__[5:]}",
                           f"VM boot failed: {one_line(e)}")
            tap.diag(e)
            return
        tap.diag(f"{prefix}: guest up in {vm.boot_time:.1f}s")
        ctx = Ctx(vm, driver, variant)
        ctx.patched = patched
        ctx.host = host
        scanner = vmlib.LogScanner(vm)
        if kern.debug:
            kmemleak_clear_boot(tap, vm, prefix)
        setup = getattr(mod, "setup", None)
        setup_err = None
        if setup is not None:
            try:
                with CaseTimeout(case_timeout):
                    setup(ctx)
            except Skip as e:
                for c in cases:
                    tap.result(True, f"{prefix}.{c.__name__[5:]}",
                               f"SKIP {e}")
                return
            except Exception as e:  # noqa: BLE001
                setup_err = e
                tap.diag(f"setup failed:\n{traceback.format_exc()}")
        dead = None
        times.append(f"boot {vm.boot_time:.0f}")
        # A case that meets the emulator's S3 resume failure
        # (lib.vm.FirmwareArtefact) runs once more, on a new VM; once
        # per file.
        retried = False
        for c in cases:
            cname = f"{prefix}.{c.__name__[5:]}"
            if dead or setup_err:
                tap.result(False, cname,
                           f"{'VM died' if dead else 'setup failed'}: "
                           f"{one_line(dead or setup_err)}")
                continue
            t0 = time.monotonic()
            while True:
                err = None
                directive = ""
                try:
                    with CaseTimeout(case_timeout):
                        c(ctx)
                except Skip as e:
                    directive = f"SKIP {e}"
                except vmlib.VMCrash as e:
                    err = e
                    dead = e
                except Exception as e:  # noqa: BLE001
                    err = e
                    if not isinstance(e, (AssertionError, vmlib.VMError)):
                        tap.diag(traceback.format_exc())
                if not isinstance(err, vmlib.FirmwareArtefact) or retried:
                    break
                retried = True
                tap.diag(f"{cname}: {err}; running the case once more on "
                         f"a new VM (logs of this one: *-attempt1.log)")
                try:
                    vm = vm_for_retry(tap, vm, ctx, mod, prefix, kern.debug,
                                      case_timeout)
                except Exception as e:  # noqa: BLE001
                    tap.diag(f"{cname}: no new VM: {e}")
                    vm = ctx.vm
                    break
                scanner = vmlib.LogScanner(vm)
                dead = None
            # After a crash the console tail in err says it all.
            problems = [] if dead else scanner.scan()
            if vm.proc.poll() is not None and not dead:
                dead = vmlib.VMCrash(f"QEMU exited (rc={vm.proc.returncode})")
            if err is not None:
                tap.diag(f"{cname}: {err}")
            if problems:
                tap.diag("\n".join(problems))
            dt = time.monotonic() - t0
            times.append(f"{c.__name__[5:]} {dt:.0f}")
            if err is not None:
                tap.result(False, cname, f"{one_line(err)} ({dt:.0f}s)")
            elif problems:
                tap.result(False, cname, one_line(problems[0]))
            else:
                tap.result(True, cname, directive)
        teardown = getattr(mod, "teardown", None)
        if teardown is not None and not dead and not setup_err:
            try:
                with CaseTimeout(case_timeout):
                    teardown(ctx)
            except Exception as e:  # noqa: BLE001
                tap.diag(f"teardown failed: {e}")
        if kern.debug and not dead:
            t0 = time.monotonic()
            kmemleak_after_unload(tap, vm, driver, scanner,
                                  f"{prefix}.unload_kmemleak", logdir)
            times.append(f"unload_kmemleak {time.monotonic() - t0:.0f}")
    finally:
        vm.close()
        _host_teardown(tap, mod, host, prefix)
        # where a file's time goes (make check's budget)
        tap.diag(f"{prefix}: took {time.monotonic() - t_file:.0f}s"
                 + (f" ({', '.join(times)})" if times else ""))


def _host_teardown(tap, mod, host, prefix):
    """mod.host_teardown(host), if the file has one (see run_file)."""
    if hasattr(mod, "host_teardown"):
        try:
            mod.host_teardown(host)
        except Exception as e:  # noqa: BLE001
            tap.diag(f"{prefix}: host_teardown failed:\n"
                     f"{traceback.format_exc()}")
            tap.result(False, f"{prefix}.host_teardown", one_line(e))


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--driver", default=os.environ.get("VX3_DRIVER", "all"),
                    choices=DRIVERS + (PATCHED, "all"))
    ap.add_argument("-t", "--test", action="append", default=[],
                    help="test file (smoke) or case (smoke.ping4), "
                         "optionally in one boot variant (smoke@iommu); "
                         "repeatable")
    ap.add_argument("--variant", action="append", default=[],
                    choices=sorted(vmlib.VARIANTS))
    ap.add_argument("--tap-start", type=int, default=1)
    ap.add_argument("--case-timeout", type=int, default=600)
    ap.add_argument("--logdir", default=os.path.join(ROOT, "build/vmtest"))
    ap.add_argument("--reuse-initramfs", action="store_true",
                    help="use the log directory's initramfs if there is "
                         "one (make check's jobs of one lane share it; "
                         "the first builds it)")
    ap.add_argument("--summary", action="store_true",
                    help="end with 'N passed, N failed, N skipped'")
    ap.add_argument("--list", action="store_true")
    ap.add_argument("--kernel", default=os.environ.get("VX3_KERNEL", "stock"),
                    choices=KERNELS,
                    help="guest kernel: Debian's newest (stock), Debian's "
                         "6.12 LTS (lts) or `make debug-kernel`'s (debug); "
                         "env VX3_KERNEL")
    ap.add_argument("--timeout-scale", type=float, default=None,
                    help="debug kernel: factor for guest command and case "
                         f"timeouts (default {DEBUG_TIMEOUT_SCALE})")
    args = ap.parse_args()
    vmlib._install_handlers()

    filters, only_variants = split_variants(args.test)
    tests = discover(filters)
    if args.list:
        for name, _, cases in tests:
            for c in cases:
                print(f"{name}.{c.__name__[5:]}")
        return 0
    if args.test and not tests:
        print(f"no test matches {args.test}", file=sys.stderr)
        return 2

    drivers = DRIVERS if args.driver == "all" else (args.driver,)
    # A file names the boot variants it runs in (VARIANTS, default
    # "default"); --variant overrides that for every file.
    variants = args.variant
    kern = Kernel(args)
    kv = kern.kver
    os.makedirs(args.logdir, exist_ok=True)
    vmlib.reap_dead_runs()

    have_vx3 = os.path.isfile(kern.vx3_ko)
    # One initramfs per log directory: concurrent runs use their own --logdir
    initrd = os.path.join(args.logdir, f"initramfs-{kv}.cpio")
    env = dict(os.environ)
    if kern.modroot:
        env["VX3_MODROOT"] = kern.modroot
    if args.driver == PATCHED:
        ko = PATCHED_KO.format(kver=kv)
        if not os.path.isfile(ko):
            raise SystemExit(f"run.py: no {os.path.relpath(ko, ROOT)}: "
                             "run `make vmxnet3-patched` first")
        env["VX3_VMXNET3_KO"] = ko
        initrd = os.path.join(args.logdir, f"initramfs-{kv}-{PATCHED}.cpio")
    # Under a lock: runs that share a log directory wait for the one
    # that builds its initramfs.
    with open(initrd + ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not (args.reuse_initramfs and os.path.isfile(initrd)):
            subprocess.check_call(
                [os.path.join(HERE, "mkinitramfs.sh"), kv, initrd]
                + ([kern.vx3_ko] if have_vx3 else []), env=env)
    if have_vx3:
        have_vx3 = subprocess.call(
            ["sh", "-c", f"cpio -t < {initrd} 2>/dev/null | grep -q /vx3.ko$"]
        ) == 0

    tap = Tap(args.tap_start)
    t0 = time.monotonic()
    try:
        for name, mod, cases in tests:
            for driver in drivers:
                for variant in variants or only_variants.get(name) or \
                        getattr(mod, "VARIANTS", ("default",)):
                    run_file(tap, args, name, mod, cases, driver, variant,
                             initrd, kern, have_vx3)
    except KeyboardInterrupt as e:
        tap.diag(f"interrupted ({e})")
        tap.result(False, "vmtest", "interrupted")
        raise SystemExit(130)
    tap.diag(f"vm tests took {time.monotonic() - t0:.0f}s")
    c = tap.counts
    if args.summary:
        print(f"{c['pass']} passed, {c['fail']} failed, {c['skip']} skipped")
    return 1 if c["fail"] else 0


if __name__ == "__main__":
    sys.exit(main())
