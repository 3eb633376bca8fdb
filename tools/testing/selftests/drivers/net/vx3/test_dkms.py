# SPDX-License-Identifier: GPL-2.0
"""The vx3-dkms package on a real host: build, install, policy, removal.

Before the VM boots (host_setup), on this machine: `make deb`, then
`apt-get install -y ./build/vx3-dkms_<version>_all.deb`: dkms builds and
installs vx3 for both kernel lines dkms.conf admits, the LTS 6.12
(installed) and the target 7.3 (only its build tree is linked from
/lib/modules/KVER/build, scripts/vx3-deps.sh), into
/lib/modules/KVER/updates/dkms/. Every run checks both builds; it boots
the guest kernel of its lane (run.py --kernel stock: 7.3, --kernel lts:
6.12), so the two lanes together boot each line with its DKMS module.
The guest's initramfs is made from the installed module tree: vx3 comes
from /lib/modules/KVER/updates/dkms/ (modules.dep resolves it there),
never from the repository's build. For 7.3, whose modules are unpacked
under /var/cache/vx3 rather than installed, the module tree is an overlay
in the log directory (modroot/): links to the unpacked kernel/ and source,
the DKMS-installed updates/dkms/vx3.ko*, depmod run on it. The guest
also gets /usr/sbin/vx3-policy, /usr/lib/vx3-dkms/vx3-load,
/usr/share/vx3-dkms/vx3.conf, kmod's modprobe (as /usr/sbin/modprobe and
/sbin/modprobe, what udev's module loading and vx3-load use on a real
host) and /etc/modprobe.d/vx3.conf as `vx3-policy --root DIR on` writes
it: the guest boots like a host on which `vx3-policy on` ran before the
reboot. host_setup also makes two initramfs images with initramfs-tools'
mkinitramfs (_real_initramfs(): the package's hook, the policy on, udev
in the initramfs), one with vx3 in the module tree and one without; the
initramfs_* cases boot them, each on a VM of its own.

package
    dkms status lists vx3 installed for both lines (6.12 and 7.3), each
    with an updates/dkms/vx3.ko* whose modinfo has description, license,
    the 15ad:07b0 alias, that kernel's vermagic and the package version,
    and no author (the module names no person); the guest kernel's host
    module tree resolves vx3 to it; installing did not switch the policy
    on; the package's Maintainer is the builder's identity.
coldplug_vx3
    At boot no NIC driver is loaded; `modprobe <modalias>` for every PCI
    device (as udev does at coldplug) binds the NIC to vx3 and does not
    load vmxnet3 (the install rule runs vx3-load). The guest's vx3.ko is
    the DKMS one (path, hash), its version (sysfs, ethtool -i) the
    package's; its taint is "O" (out of tree) plus "E" where the kernel
    flags the module's signature as unverifiable (DKMS signs with its own
    key, which the kernel does not trust), nothing else.
traffic
    ping both ways, IPv4 and IPv6, and a short iperf each way over vx3.
policy_off
    `vx3-policy off` removes the modprobe.d file; after the equivalent of
    a reboot (both drivers unloaded, coldplug again) vmxnet3 has the NIC
    (vx3 is loaded too: its alias matches, but the in-tree module comes
    first in the alias index).
try_revert
    `vx3-policy try 10`: vx3 at once, back on vmxnet3 by itself 10 s
    later, traffic both times, the policy still off; a confirmed try keeps
    vx3 and switches the policy on.
policy_on
    `vx3-policy on` installs the file again; `modprobe vmxnet3` by name
    now runs vx3-load, which loads vx3 (not vmxnet3) and vx3 takes the
    NIC.
doc_rule
    The one-line install rule of vx3.rst, read from it, in place of the
    policy: vx3 at coldplug, and vmxnet3 once the vx3 module is gone.
initramfs_vx3, initramfs_no_vx3, initramfs_sig_enforce,
initramfs_console_recovery
    Boots from the real initramfs images: with vx3, the NIC on vx3; a
    kernel without a vx3 module, module.sig_enforce=1 (dkms's key is not
    trusted) and modprobe.blacklist=vx3, the NIC on vmxnet3 with
    vx3-load's reason in the log; pings both ways each time.
policy_report
    vx3-policy --root on a planted system image: the driver of each
    kernel, GRUB's default entry, the configuration matching the driver
    name vmxnet3.
remove_purge
    On the host: `dpkg -r vx3-dkms` with the policy on and an initramfs
    of each kernel that holds it, in a private mount namespace: afterwards
    no image holds vx3.conf; it removes the module for every kernel
    (no updates/dkms/vx3.ko*, no /var/lib/dkms/vx3, no /usr/src/vx3-*,
    nothing in modules.dep), `dpkg --purge vx3-dkms` leaves no package
    state, and no /etc/modprobe.d/vx3.conf exists; after the cleanup
    every /lib/modules/KVER holds what it held before.

host_teardown purges the package (and dkms's self-made signing key, if
this run created it) whatever happened, and removes the modules.* files
and the empty updates/ directories that dkms's depmod left in a
/lib/modules/KVER that had none (7.3's holds only the build link), so the
host is as it was.
"""

import fcntl
import glob
import json
import os
import re
import shlex
import subprocess
import time

from lib.nic import diag, ping, wait_carrier
from lib.test import Skip, iperf_bytes, iperf_guest_to_peer, \
    iperf_peer_to_guest
from lib.vm import VM, LogScanner, guest_image, guest_modroot, kver, \
    lts_kver, sh

NICS = 1
DRIVERS = ("vx3",)
PKG = "vx3-dkms"
POLICY = "/usr/sbin/vx3-policy"
SHARED_CONF = "/usr/share/vx3-dkms/vx3.conf"
LOAD = "/usr/lib/vx3-dkms/vx3-load"
CONF = "/etc/modprobe.d/vx3.conf"
# dkms (Debian 3.0.10) signs modules with a key it makes on first use
MOK = ("/var/lib/dkms/mok.key", "/var/lib/dkms/mok.pub")
# A run that died before its teardown left the package behind: the next
# run may remove it (a vx3-dkms without this marker is the user's). The
# marker (JSON) has the MOK files that existed before the run and what
# each /lib/modules/KVER held.
MARKER = "/var/cache/vx3/dkms-test-installed"
# One run at a time per host (held from host_setup to host_teardown)
LOCKFILE = "/run/vx3/dkms-test.lock"
APT_ENV = "DEBIAN_FRONTEND=noninteractive"
LOCK = "-o DPkg::Lock::Timeout=300"	# apt-get only; dpkg: _dpkg()
DPKG_LOCKED = "dpkg frontend lock was locked"
TAINT_O, TAINT_E = 1 << 12, 1 << 13
IPERF_SECONDS = 3
MAC_IF = ("for a in /sys/class/net/*/address; do grep -qs {mac} $a && "
          "n=$(basename ${{a%/address}}); done; ")
# "Reboot": no NIC driver loaded
UNLOAD = ("for m in vx3 vmxnet3; do [ ! -d /sys/module/$m ] || rmmod $m || "
          "exit 1; done; ")
COLDPLUG = ("for a in $(cat /sys/bus/pci/devices/*/modalias); do "
            "modprobe -q $a || true; done; ")


def _lines():
    """The kernel lines dkms.conf admits and this host has: the target
    (7.3) and the LTS (6.12)."""
    return (kver(), lts_kver())


def _moddirs():
    """What each /lib/modules/KVER holds (entry names)."""
    return {k: sorted(os.listdir(os.path.join("/lib/modules", k)))
            for k in sorted(os.listdir("/lib/modules"))}


def _dkms_ko(k):
    """The vx3.ko* dkms installed for kernel k, or None."""
    ko = glob.glob(f"/lib/modules/{k}/updates/dkms/vx3.ko*")
    return ko[0] if ko else None


def _dpkg(host, args, log):
    """dpkg ARGS, waiting (up to 300 s, as apt-get with LOCK) while
    another package manager on this host holds dpkg's lock: dpkg itself
    fails at once then."""
    deadline = time.monotonic() + 300
    while True:
        rc, out = sh(f"{APT_ENV} dpkg {args}", timeout=600, check=False)
        if rc == 0 or DPKG_LOCKED not in out or \
                time.monotonic() > deadline:
            break
        time.sleep(3)
    _log(host, log, out)
    if rc:
        raise RuntimeError(f"dpkg {args} failed (rc={rc}):\n{out}")
    return out


def _installed():
    rc, out = sh(["dpkg-query", "-W", "-f=${db:Status-Status}", PKG],
                 check=False)
    return rc == 0 and out.strip() not in ("", "not-installed")


def _log(host, name, text):
    with open(os.path.join(host.logdir, name), "a") as f:
        f.write(text)


def _lock(host, timeout=900):
    os.makedirs(os.path.dirname(LOCKFILE), exist_ok=True)
    fd = os.open(LOCKFILE, os.O_RDWR | os.O_CREAT, 0o644)
    deadline = time.monotonic() + timeout
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            break
        except BlockingIOError:
            if time.monotonic() > deadline:
                os.close(fd)
                raise RuntimeError(f"{LOCKFILE} held by another run for "
                                   f"{timeout}s")
            time.sleep(2)
    host.state["lockfd"] = fd


def host_setup(host):
    if host.kernel.debug:
        raise Skip("DKMS builds for the installed Debian kernels only")
    os.makedirs(host.logdir, exist_ok=True)
    _lock(host)
    if os.path.exists(MARKER):		# an interrupted run
        with open(MARKER) as f:
            text = f.read()
        try:
            old = json.loads(text)
        except ValueError:		# the older format: MOK files only
            old = {"mok_before": text.split()}
        host.state["mok_before"] = old.get("mok_before", [])
        host.state["moddirs"] = old.get("moddirs", {})
        _purge(host)
        diag(f"what an interrupted run left ({MARKER}): purged")
    elif _installed() or os.path.exists("/var/lib/dkms/vx3"):
        raise Skip(f"{PKG} (or a dkms vx3) is installed on this host "
                   "and not by this test: left alone")
    if os.path.exists(CONF):
        raise Skip(f"this host has a {CONF} of its own (removing "
                   f"{PKG} would delete it): left alone")
    st = host.state
    st["mok_before"] = [p for p in MOK if os.path.exists(p)]
    st["moddirs"] = _moddirs()
    t0 = time.monotonic()
    st["version"] = sh(["dpkg-parsechangelog", "-l", os.path.join(
        host.root, "packaging/debian/changelog"), "-S", "Version"])[1].strip()
    # This machine's identity is a placeholder: a package marked
    # UNRELEASED (scripts/vx3-deb.sh)
    _, out = sh(["make", "-C", host.root, "--no-print-directory", "deb",
                 "VX3_DEB_DRY_RUN=1"], timeout=300)
    _log(host, "host-make-deb.log", out)
    t1 = time.monotonic()
    os.makedirs(os.path.dirname(MARKER), exist_ok=True)
    with open(MARKER, "w") as f:
        json.dump({"mok_before": st["mok_before"],
                   "moddirs": st["moddirs"]}, f)
    # The README's commands (make deb leaves one vx3-dkms_*.deb)
    _, out = sh(f"cd {host.root} && {APT_ENV} apt-get install {LOCK} -y "
                f"./build/{PKG}_*.deb", timeout=900)
    _log(host, "host-install.log", out)
    t2 = time.monotonic()
    st["dkms_status"] = sh("dkms status vx3")[1]
    _log(host, "host-install.log", st["dkms_status"])
    # Both lines are checked by test_package; the guest's is needed here
    st["built"] = {k: _dkms_ko(k) for k in _lines()}
    if not st["built"].get(host.kver):
        raise RuntimeError(
            f"dkms installed no vx3 for {host.kver} (the guest kernel): no "
            f"/lib/modules/{host.kver}/updates/dkms/vx3.ko*; dkms status:\n"
            f"{st['dkms_status']}")
    # The host's module tree (depmod run by dkms) resolves vx3 to it
    rc, out = sh(["modinfo", "-k", host.kver, "-n", "vx3"], check=False)
    st["modpath"] = out.strip() if rc == 0 else f"(modinfo: {out.strip()})"
    st["sha256"] = sh(f"xz -dcf {st['built'][host.kver]} | sha256sum"
                      )[1].split()[0]

    # What `vx3-policy on` writes, in a root of its own: this host's
    # /etc/modprobe.d stays as it is.
    polroot = os.path.join(host.logdir, "policy-root")
    sh(["rm", "-rf", polroot])
    _, out = sh([POLICY, "--root", polroot, "on"])
    _log(host, "host-install.log", out)
    initrd = os.path.join(host.logdir, f"initramfs-dkms-{host.kver}.cpio")
    env = dict(os.environ, VX3_EXTRA_MODS="vx3",
               VX3_EXTRA_BINS="/usr/bin/kmod",
               VX3_EXTRA_FILES=f"{POLICY} {SHARED_CONF} {LOAD} "
                               f"{polroot}{CONF}={CONF}")
    env.pop("VX3_MODROOT", None)
    if guest_modroot(host.kver):
        env["VX3_MODROOT"] = _overlay(host)
    # No VX3_KO argument: the repository's vx3.ko stays out.
    subprocess.run([os.path.join(os.path.dirname(__file__),
                                 "mkinitramfs.sh"), host.kver, initrd],
                   env=env, check=True, timeout=300,
                   stdout=subprocess.DEVNULL)
    files = sh(f"cpio -t < {initrd} 2>/dev/null | grep -E 'vx3\\.ko|vx3.conf'"
               )[1].split()
    st["initrd_files"] = files
    t3 = time.monotonic()
    st["real_initrd"] = {
        name: _real_initramfs(host, name, with_vx3, polroot + CONF)
        for name, with_vx3 in (("vx3", True), ("no-vx3", False))}
    diag(f"host: mkinitramfs (initramfs-tools) x2 "
         f"{time.monotonic() - t3:.0f}s")
    diag(f"host: make deb {t1 - t0:.0f}s, apt-get install (dkms build) "
         f"{t2 - t1:.0f}s, initramfs {time.monotonic() - t2:.0f}s")
    return initrd


def _overlay(host):
    """A module tree for a kernel whose modules are unpacked, not
    installed (7.3): ROOT/lib/modules/KVER with links to the unpacked
    tree's entries, copies of the files depmod reads, and the DKMS-built
    vx3.ko* as /lib/modules/KVER has it; depmod indexes it. Returns ROOT."""
    k = host.kver
    src = os.path.join(guest_modroot(k), "lib/modules", k)
    root = os.path.join(host.logdir, "modroot")
    dst = os.path.join(root, "lib/modules", k)
    sh(["rm", "-rf", root])
    os.makedirs(os.path.join(dst, "updates/dkms"))
    for e in os.listdir(src):
        if e in ("modules.builtin", "modules.builtin.modinfo",
                 "modules.order"):
            sh(["cp", os.path.join(src, e), dst])
        elif not e.startswith("modules.") and e != "updates":
            os.symlink(os.path.join(src, e), os.path.join(dst, e))
    ko = host.state["built"][k]
    sh(["cp", ko, os.path.join(dst, "updates/dkms/")])
    sh(["depmod", "-b", root, k], timeout=300)
    got = sh(["modinfo", "-b", root, "-k", k, "-n", "vx3"])[1].strip()
    want = os.path.join(dst, "updates/dkms", os.path.basename(ko))
    if got != want:
        raise RuntimeError(f"{root}: modinfo -n vx3 is {got}, not {want}")
    return root


def _kconfig(k):
    """Kernel k's configuration, which mkinitramfs reads from
    /boot/config-K: there for an installed kernel, in the module tree
    for 7.3's unpacked packages."""
    p = f"/boot/config-{k}"
    if os.path.exists(p):
        return p
    return os.path.join(guest_modroot(k) or "/", "lib/modules", k, "config")


def _real_initramfs(host, name, with_vx3, policy_conf):
    """An initramfs of the guest kernel made by initramfs-tools'
    mkinitramfs with the package installed on this host (its hook
    /usr/share/initramfs-tools/hooks/vx3) and the policy on: in a private
    mount namespace, /etc/modprobe.d is this host's plus policy_conf as
    vx3.conf, and /lib/modules/KVER an overlay of the guest kernel's
    module tree with the DKMS-built vx3.ko (with_vx3) or without any vx3
    (a kernel dkms did not build vx3 for), indexed by depmod. The
    configuration is this host's /etc/initramfs-tools with MODULES=list
    (only what hooks add: vx3 and vmxnet3 come from the package's hook)
    and the test's hook and init-premount script
    (guest/initramfs-tools/), which stop the boot after udev's coldplug
    and run the control agent. Returns the image's path."""
    k, w = host.kver, os.path.join(host.logdir, f"real-{name}")
    out = os.path.join(host.logdir, f"initrd-real-{name}.img")
    sh(["rm", "-rf", w])
    os.makedirs(w)
    conf = os.path.join(w, "initramfs-tools")
    sh(["cp", "-a", "/etc/initramfs-tools", conf])
    here = os.path.dirname(os.path.abspath(__file__))
    sh(f"cp -a {here}/guest/initramfs-tools/. {conf}/ && "
       f"cp {here}/guest/agent.sh {conf}/vx3-agent && "
       f"sed -i 's/^MODULES=.*/MODULES=list/' {conf}/initramfs.conf")
    src = os.path.join(guest_modroot(k) or "/", "lib/modules", k)
    ko = host.state["built"][k]
    add = (f"mkdir -p $M/updates/dkms && cp {w}/{os.path.basename(ko)} "
           f"$M/updates/dkms/" if with_vx3 else "rm -rf $M/updates")
    script = f"""set -e
        mount --make-rprivate /
        M=/lib/modules/{k}
        mkdir -p {w}/upper {w}/work {w}/modprobe.d
        cp {ko} {w}/
        mount -t overlay overlay -o lowerdir={src},upperdir={w}/upper,workdir={w}/work $M
        rm -f $M/updates/dkms/vx3.ko*
        {add}
        depmod {k}
        cp -a /etc/modprobe.d/. {w}/modprobe.d/
        cp {policy_conf} {w}/modprobe.d/vx3.conf
        mount --bind {w}/modprobe.d /etc/modprobe.d
        mkdir -p {w}/boot
        cp {_kconfig(k)} {w}/boot/config-{k}
        mount --bind {w}/boot /boot
        mkinitramfs -d {conf} -o {out} {k}
        """
    _, text = sh(["unshare", "-m", "sh", "-c", script], timeout=300)
    _log(host, f"host-mkinitramfs-{name}.log", text)
    return out


def _restore_moddirs(host):
    """Remove what dkms's depmod added to a /lib/modules/KVER: modules.*
    files and updates/ directories without files (dkms removed the
    module). Returns what else is new there."""
    before = host.state.get("moddirs", {})
    left = []
    for k, now in _moddirs().items():
        if k not in before:		# not recorded (an older marker)
            continue
        for e in set(now) - set(before[k]):
            p = os.path.join("/lib/modules", k, e)
            if e.startswith("modules.") and os.path.isfile(p) and \
                    not os.path.islink(p):
                os.unlink(p)
            elif e == "updates" and os.path.isdir(p) and \
                    not os.path.islink(p) and \
                    not any(f for _, _, f in os.walk(p)):
                sh(["rm", "-r", p])
            else:
                left.append(p)
    return left


def _purge(host):
    """Remove the package and what dkms made for it, each step even if an
    earlier one failed; raise afterwards if anything failed or is left."""
    errors = []
    if _installed():
        try:
            _dpkg(host, f"--purge {PKG}", "host-teardown.log")
        except Exception as e:  # noqa: BLE001
            errors.append(str(e))
    if os.path.exists("/var/lib/dkms/vx3"):
        rc, out = sh("dkms remove vx3 --all", timeout=600, check=False)
        _log(host, "host-teardown.log", out)
        if rc:
            errors.append(f"dkms remove vx3 --all (rc={rc}):\n{out}")
    # What neither removed (this run installed it: the marker or state)
    for ko in glob.glob("/lib/modules/*/updates/dkms/vx3.ko*"):
        errors.append(f"{ko} left: removed")
        os.unlink(ko)
        sh(["depmod", "-a", ko.split("/")[3]], timeout=300, check=False)
    for p in MOK:
        if p not in host.state.get("mok_before", MOK) and os.path.exists(p):
            os.unlink(p)
    left = (glob.glob("/var/lib/dkms/vx3") + glob.glob("/usr/src/vx3-*") +
            glob.glob(CONF) + _restore_moddirs(host))
    if left:
        errors.append(f"left behind after purge: {left}")
    if errors:
        raise RuntimeError("\n".join(errors))
    if os.path.exists(MARKER):
        os.unlink(MARKER)


def host_teardown(host):
    try:
        if "version" in host.state:
            _purge(host)
    finally:
        if "lockfd" in host.state:
            os.close(host.state.pop("lockfd"))


def test_package(ctx):
    st, kver = ctx.host.state, ctx.host.kver
    ver = st["version"].rsplit("-", 1)[0]
    missing = [k for k, ko in st["built"].items() if not ko]
    ctx.expect(not missing, f"dkms built no vx3 for {', '.join(missing)}: "
               f"no /lib/modules/KVER/updates/dkms/vx3.ko*; dkms status:\n"
               f"{st['dkms_status']}")
    for k, ko in st["built"].items():
        ctx.expect(re.search(rf"^vx3/{re.escape(ver)}, {re.escape(k)}, "
                             rf"x86_64: installed", st["dkms_status"], re.M),
                   f"dkms status: vx3 {ver} not installed for {k}:\n"
                   f"{st['dkms_status']}")
        info = sh(["modinfo", ko])[1]
        want = {"description": r"VMware VMXNET3 Ethernet driver \(vx3\)",
                "license": "GPL",
                "alias": r"pci:v000015ADd000007B0sv\*sd\*bc\*sc\*i\*",
                "vermagic": re.escape(k) + " ",
                # stamped by compat/vx3-dkms-prepare.sh
                "version": re.escape(ver) + "$"}
        for f, v in want.items():
            ctx.expect(re.search(rf"^{f}:\s+{v}", info, re.M),
                       f"modinfo {ko}: no {f} matching {v!r}:\n{info}")
        ctx.expect(not re.search(r"^author:", info, re.M),
                   f"modinfo {ko}: an author line:\n{info}")
    ctx.expect(st["modpath"] == st["built"][kver],
               f"modinfo -k {kver} -n vx3: {st['modpath']}, not "
               f"{st['built'][kver]}")
    ctx.expect(not os.path.exists(CONF),
               f"installing {PKG} switched the policy on ({CONF} exists)")
    # The builder's identity (this machine's, a placeholder: the dry run
    # of scripts/vx3-deb.sh), never the repository's placeholder
    deb = glob.glob(os.path.join(ctx.host.root, f"build/{PKG}_*.deb"))[0]
    maint = sh(["dpkg-deb", "-f", deb, "Maintainer"])[1].strip()
    who = os.environ.get("VX3_POSTER", "").strip() or "{} <{}>".format(
        *(sh(["git", "-C", ctx.host.root, "config", f"user.{k}"])[1].strip()
          for k in ("name", "email")))
    ctx.expect(maint == who, f"Maintainer: {maint}, not the builder ({who})")
    files = st["initrd_files"]
    ctx.expect(f"lib/modules/{kver}/updates/dkms/vx3.ko" in files and
               not any("extra/vx3.ko" in f for f in files) and
               "etc/modprobe.d/vx3.conf" in files,
               f"initramfs: expected the DKMS vx3.ko and the policy, not "
               f"the repository's vx3.ko: {files}")


def _nic_driver(ctx):
    """Guest shell: $n = NIC 1's interface, $d = its driver (or none)."""
    return ("n=; for i in $(seq 50); do " + MAC_IF.format(mac=ctx.vm.mac(1))
            + "[ -n \"$n\" ] && break; sleep 0.1; done; d=none; "
            "[ -n \"$n\" ] && d=$(basename $(readlink "
            "/sys/class/net/$n/device/driver)); echo \"nic=$n driver=$d\"; ")


def _expect_bound(ctx, out, drv, what):
    m = re.search(r"nic=(\S*) driver=(\S+)", out)
    ctx.expect(m and m.group(2) == drv,
               f"{what}: NIC 1 is bound to {m.group(2) if m else '?'}, "
               f"not {drv}:\n{out}")
    ctx.state["if1"] = m.group(1)


def _loaded(ctx, mod):
    return ctx.vm.run(f"test -d /sys/module/{mod}")[0] == 0


def test_coldplug_vx3(ctx):
    vm, kver = ctx.vm, ctx.host.kver
    # kmod's modprobe where a Debian host has it (vx3-load calls
    # /sbin/modprobe)
    vm.check("ln -sf /usr/bin/kmod /usr/sbin/modprobe && "
             "ln -sf /usr/bin/kmod /sbin/modprobe")
    ctx.expect(not _loaded(ctx, "vx3") and not _loaded(ctx, "vmxnet3"),
               "a NIC driver was loaded before coldplug")
    out = vm.check(COLDPLUG + _nic_driver(ctx) + "vx3-policy status",
                   timeout=120)
    _expect_bound(ctx, out, "vx3", "coldplug with the policy on")
    ctx.expect(not _loaded(ctx, "vmxnet3"),
               "coldplug loaded vmxnet3 although vx3 took the NIC")
    ctx.expect(re.search(r"^policy: on .*^  \S+ \(running\): vx3$.*"
                         r"^[0-9a-f:.]+: vx3$", out, re.M | re.S),
               f"vx3-policy status:\n{out}")
    out = vm.check(f"cat {CONF}; grep '^updates/dkms/vx3.ko:' "
                   f"/lib/modules/{kver}/modules.dep")
    ctx.expect(re.search(r"^install vmxnet3 /usr/lib/vx3-dkms/vx3-load$",
                         out, re.M) and
               not re.search(r"^\s*blacklist", out, re.M),
               f"guest {CONF}:\n{out}")
    # The guest's only vx3.ko: the one DKMS built and installed
    out = vm.check("modinfo -n vx3; sha256sum $(modinfo -n vx3)")
    ctx.expect(f"/lib/modules/{kver}/updates/dkms/vx3.ko\n" in out and
               ctx.host.state["sha256"] in out,
               f"guest vx3.ko is not the DKMS-installed one "
               f"({ctx.host.state['sha256']}):\n{out}")
    ver = ctx.host.state["version"]
    out = vm.check(f"cat /sys/module/vx3/version; ethtool -i "
                   f"{ctx.state['if1']}")
    ctx.expect(re.search(rf"\A{re.escape(ver)}\n", out) and
               re.search(rf"^version: {re.escape(ver)}$", out, re.M),
               f"vx3's version is not the package's {ver}:\n{out}")
    mt = vm.check("cat /sys/module/vx3/taint").strip()
    kt = int(vm.check("cat /proc/sys/kernel/tainted"))
    sig = vm.run("dmesg | grep -m1 'vx3: module verification failed'")[1]
    diag(f"vx3 taint {mt!r}, kernel tainted={kt}; {sig.strip()}")
    ctx.expect("O" in mt and set(mt) <= {"O", "E"},
               f"/sys/module/vx3/taint is {mt!r}, expected O (and E for "
               f"the untrusted signature)")
    ctx.expect(kt & ~(TAINT_O | TAINT_E) == 0,
               f"kernel taint {kt} has more than O|E")


def test_traffic(ctx):
    vm, ifn = ctx.vm, ctx.ifname(1)
    ctx.config_ip(1)
    wait_carrier(ctx)
    ping(ctx)
    ping(ctx, peer=True)
    ping(ctx, v6=True)
    ping(ctx, v6=True, peer=True)
    for fn in (iperf_guest_to_peer, iperf_peer_to_guest):
        out = fn(ctx, IPERF_SECONDS)
        ctx.expect(iperf_bytes(out) > 0, f"{fn.__name__}: no bytes:\n{out}")
    drv = vm.check(f"basename $(readlink /sys/class/net/{ifn}/device/driver)")
    ctx.expect(drv.strip() == "vx3", f"traffic ran over {drv.strip()}")


def test_policy_off(ctx):
    vm = ctx.vm
    out = vm.check("vx3-policy off")
    ctx.expect(vm.run(f"test -e {CONF}")[0] != 0,
               f"vx3-policy off left {CONF}:\n{out}")
    # The next boot: no NIC driver loaded, then coldplug. Both modules
    # match the modalias and are loaded (as udev does); vmxnet3, listed
    # first by the alias index (in-tree modules sort before updates/),
    # binds the NIC.
    out = vm.check(UNLOAD + COLDPLUG + _nic_driver(ctx), timeout=120)
    _expect_bound(ctx, out, "vmxnet3", "coldplug with the policy off")
    ctx.config_ip(1)
    wait_carrier(ctx)
    ping(ctx)


def test_try_revert(ctx):
    """From vmxnet3 (after policy_off), `vx3-policy try 10` moves the NIC
    to vx3 at once (it carries traffic there); unconfirmed, it is back on
    vmxnet3 after 10 s by itself and carries traffic again, and the policy
    stayed off. Then a try that is confirmed: vx3 keeps the NIC and the
    policy is on."""
    vm = ctx.vm
    out = vm.check(_nic_driver(ctx))
    _expect_bound(ctx, out, "vmxnet3", "before vx3-policy try")
    t0 = time.monotonic()
    out = vm.check("vx3-policy try 10 && " + _nic_driver(ctx), timeout=60)
    _expect_bound(ctx, out, "vx3", "vx3-policy try")
    ctx.config_ip(1)
    wait_carrier(ctx)
    ping(ctx)
    left = 10 - (time.monotonic() - t0)
    ctx.expect(left > 0, "the try took more than its 10 s to check")
    time.sleep(left + 3)
    out = vm.check(_nic_driver(ctx) + "vx3-policy status; dmesg | "
                   "grep 'vx3-policy: try ended'", timeout=60)
    _expect_bound(ctx, out, "vmxnet3", "10 s after an unconfirmed try")
    ctx.expect("policy: off" in out, f"the try switched the policy:\n{out}")
    ctx.config_ip(1)
    wait_carrier(ctx)
    ping(ctx)
    out = vm.check("vx3-policy try 60 && vx3-policy confirm && "
                   "sleep 1 && " + _nic_driver(ctx) + "vx3-policy status",
                   timeout=120)
    _expect_bound(ctx, out, "vx3", "a confirmed try")
    ctx.expect("policy: on" in out and "try:" not in out,
               f"confirm did not switch the policy on:\n{out}")


def test_policy_on(ctx):
    vm = ctx.vm
    vm.check("vx3-policy on")
    vm.check(f"cmp {CONF} {SHARED_CONF}")
    vm.check(UNLOAD)
    # By name, as /etc/modules or a script would: the install rule runs
    # vx3-load, which loads vx3 (and not vmxnet3: vx3 took the NIC).
    out = vm.check("modprobe vmxnet3; " + _nic_driver(ctx), timeout=120)
    _expect_bound(ctx, out, "vx3", "modprobe vmxnet3 with the policy on")
    ctx.expect(not _loaded(ctx, "vmxnet3"),
               "modprobe vmxnet3 loaded vmxnet3 although vx3 took the NIC")
    ctx.config_ip(1)
    wait_carrier(ctx)
    ping(ctx)


def test_doc_rule(ctx):
    """The install rule vx3.rst ("Coexistence with vmxnet3") gives, read
    from the document, in place of the policy: at the reboot vx3 takes
    the NIC and vmxnet3 is not loaded; with vx3's module gone from the
    kernel's tree (a kernel without vx3), vmxnet3 takes it."""
    vm, k = ctx.vm, ctx.host.kver
    doc = os.path.join(ctx.host.root, "Documentation/networking/"
                       "device_drivers/ethernet/vmware/vx3.rst")
    with open(doc) as f:
        m = re.search(r"^  (install vmxnet3 .*)$", f.read(), re.M)
    ctx.expect(m, f"{doc}: no install rule")
    ko = f"/lib/modules/{k}/updates/dkms/vx3.ko"
    vm.check(f"vx3-policy off && echo {shlex.quote(m.group(1))} > "
             f"/etc/modprobe.d/vx3-doc.conf")
    try:
        out = vm.check(UNLOAD + COLDPLUG + _nic_driver(ctx), timeout=120)
        _expect_bound(ctx, out, "vx3", "coldplug with the rule of vx3.rst")
        ctx.expect(not _loaded(ctx, "vmxnet3"),
                   "the rule of vx3.rst loaded vmxnet3 beside vx3")
        vm.check(f"mv {ko} /tmp/vx3.ko && ln -sf /usr/bin/kmod /tmp/depmod "
                 f"&& /tmp/depmod {k}")
        out = vm.check(UNLOAD + COLDPLUG + _nic_driver(ctx), timeout=120)
        _expect_bound(ctx, out, "vmxnet3",
                      "coldplug with the rule of vx3.rst, no vx3 module")
    finally:
        vm.run(f"[ -e {ko} ] || mv /tmp/vx3.ko {ko}; /tmp/depmod {k}; "
               f"rm -f /etc/modprobe.d/vx3-doc.conf")
    ctx.config_ip(1)
    wait_carrier(ctx)
    ping(ctx)


def _boot_real(ctx, name, append=""):
    """Boot the guest kernel on the real-generator initramfs name
    (_real_initramfs) with one NIC; returns (driver of the NIC, vx3-load's
    log lines). Fails unless the NIC, with an address, answers pings both
    ways over the driver it got and the guest log is clean."""
    host = ctx.host
    logdir = os.path.join(host.logdir, f"boot-{name}" +
                          ("-" + append.split("=")[0] if append else ""))
    with VM(host.kver, host.state["real_initrd"][name], logdir=logdir,
            append=append, boot_timeout=ctx.vm.boot_timeout,
            timeout_scale=ctx.vm.timeout_scale) as vm:
        mac, g4, p4 = vm.mac(1), vm.guest_ip4(1), vm.peer_ip4(1)
        out = vm.check(
            "n=; for a in /sys/class/net/*/address; do grep -qs "
            f"{mac} $a && n=$(basename ${{a%/address}}); done; "
            "d=none; [ -n \"$n\" ] && d=$(basename $(readlink "
            "/sys/class/net/$n/device/driver)); echo \"nic=$n driver=$d\"; "
            "grep -E '^(vx3|vmxnet3) ' /proc/modules | cut -d' ' -f1; "
            "dmesg | grep -E 'vx3-load|vx3: |vmxnet3' || true", timeout=60)
        diag(f"{name} {append}: {out.strip()}")
        m = re.search(r"nic=(\S*) driver=(\S+)", out)
        ctx.expect(m and m.group(1), f"{name}: no interface has NIC 1's "
                   f"MAC:\n{out}")
        n = m.group(1)
        vm.check(f"ip addr add {g4}/24 dev {n} && ip link set {n} up")
        rc, ping_out = vm.run(f"for i in $(seq 20); do ping -c 2 -W 1 {p4} "
                              f">/dev/null && exit 0; sleep 1; done; "
                              f"ping -c 2 -W 1 {p4}", timeout=90)
        ctx.expect(rc == 0, f"{name}: guest -> peer ping over {m.group(2)} "
                   f"failed:\n{ping_out}")
        rc, ping_out = vm.peer(1, f"ping -c 2 -W 2 {g4}", timeout=30)
        ctx.expect(rc == 0, f"{name}: peer -> guest ping over {m.group(2)} "
                   f"failed:\n{ping_out}")
        bad = LogScanner(vm).scan()
        ctx.expect(not bad, f"{name}: " + "\n".join(bad))
        return m.group(2), [ln for ln in out.splitlines()
                            if "vx3-load" in ln]


def test_initramfs_vx3(ctx):
    """initramfs-tools' image with the policy on and a loadable vx3: udev's
    coldplug in the initramfs binds the NIC to vx3; vmxnet3 is not
    loaded and vx3-load logs no fallback."""
    drv, log = _boot_real(ctx, "vx3")
    ctx.expect(drv == "vx3", f"NIC on {drv}, not vx3")
    ctx.expect(not log, f"vx3-load fell back: {log}")


def test_initramfs_no_vx3(ctx):
    """The policy on, a kernel without a vx3 module (one dkms did not
    build vx3 for): the NIC comes up on vmxnet3, and vx3-load says why.
    With a blacklist of vmxnet3 (the package before this test) the NIC
    had no driver."""
    drv, log = _boot_real(ctx, "no-vx3")
    ctx.expect(drv == "vmxnet3", f"NIC on {drv}, not vmxnet3")
    ctx.expect(any("cannot be loaded" in ln and "not found" in ln
                   for ln in log), f"vx3-load logged no reason: {log}")


def test_initramfs_sig_enforce(ctx):
    """The policy on, vx3 built by dkms and signed with its own key, which
    the kernel does not trust; the kernel enforces module signatures
    (module.sig_enforce=1, as under Secure Boot's lockdown): vx3 is
    rejected and the NIC comes up on vmxnet3 (signed by the kernel's
    build key)."""
    drv, log = _boot_real(ctx, "vx3", append="module.sig_enforce=1")
    ctx.expect(drv == "vmxnet3", f"NIC on {drv}, not vmxnet3")
    ctx.expect(any("cannot be loaded" in ln and
                   re.search(r"Key was rejected|Required key not available",
                             ln) for ln in log),
               f"vx3-load logged no reason: {log}")


def test_initramfs_console_recovery(ctx):
    """The administrator's console recovery (vx3-admin.rst): with the
    policy on and a loadable vx3, modprobe.blacklist=vx3 on the kernel
    command line gives the NIC to vmxnet3."""
    drv, log = _boot_real(ctx, "vx3", append="modprobe.blacklist=vx3")
    ctx.expect(drv == "vmxnet3", f"NIC on {drv}, not vmxnet3")
    ctx.expect(any("blacklisted on the kernel command line" in ln
                   for ln in log), f"vx3-load logged no reason: {log}")


def test_policy_report(ctx):
    """vx3-policy status and on --root, on a system image: each kernel
    with the driver its boot gives the NICs (vx3 where modules.dep has
    vx3, else vmxnet3), GRUB's default entry marked (entry 0, a saved
    submenu entry), and a warning for each configuration line that
    matches on the driver name vmxnet3 alone (netplan, systemd .link,
    NetworkManager, udev), none for a line naming vx3 too."""
    root = os.path.join(ctx.host.logdir, "report-root")
    sh(["rm", "-rf", root])
    files = {
        "lib/modules/7.3.9-test/modules.dep":
            "updates/dkms/vx3.ko.xz:\n",
        "lib/modules/6.12.9-test/modules.dep":
            "kernel/drivers/net/vmxnet3/vmxnet3.ko.xz:\n",
        "boot/grub/grub.cfg":
            "set default=\"${saved_entry}\"\n"
            "menuentry 'Debian' $menuentry_id_option 'gnulinux-simple' {\n"
            "\tlinux\t/boot/vmlinuz-7.3.9-test root=/dev/sda1 ro\n}\n"
            "submenu 'Advanced' $menuentry_id_option 'gnulinux-adv' {\n"
            "\tmenuentry 'Debian, 6.12' $menuentry_id_option 'g-6.12' {\n"
            "\t\tlinux\t/boot/vmlinuz-6.12.9-test root=/dev/sda1 ro\n"
            "\t}\n}\n",
        "boot/grub/grubenv": "# GRUB Environment Block\n"
                             "saved_entry=gnulinux-adv>g-6.12\n",
        "etc/netplan/50-lan.yaml":
            "network:\n  ethernets:\n    lan:\n      match:\n"
            "        driver: vmxnet3\n",
        "etc/netplan/60-both.yaml":
            "network:\n  ethernets:\n    b:\n      match:\n"
            "        driver: [vmxnet3, vx3]\n",
        "etc/systemd/network/10-lan.link":
            "[Match]\nDriver=vmxnet3\n[Link]\nName=lan0\n",
        "etc/systemd/network/11-both.link": "[Match]\nDriver=vmxnet3 vx3\n",
        "etc/NetworkManager/system-connections/lan.nmconnection":
            "[connection]\nid=lan\n[match]\ndriver=vmxnet3;\n",
        "etc/udev/rules.d/70-lan.rules":
            'SUBSYSTEM=="net", DRIVERS=="vmxnet3", NAME="lan0"\n',
    }
    for rel, text in files.items():
        os.makedirs(os.path.dirname(os.path.join(root, rel)), exist_ok=True)
        with open(os.path.join(root, rel), "w") as f:
            f.write(text)
    out = sh([POLICY, "--root", root, "status"])[1]
    diag(out)
    ctx.expect(re.search(r"^  6\.12\.9-test \(default boot entry\): "
                         r"vmxnet3 \(no vx3 module", out, re.M) and
               re.search(r"^  7\.3\.9-test: vx3$", out, re.M),
               f"kernels and default entry not reported:\n{out}")
    for rel in ("50-lan.yaml", "10-lan.link", "lan.nmconnection",
                "70-lan.rules"):
        ctx.expect(rel in out, f"no warning for {rel}:\n{out}")
    for rel in ("60-both.yaml", "11-both.link"):
        ctx.expect(rel not in out, f"a warning for {rel}:\n{out}")
    with open(os.path.join(root, "boot/grub/grubenv"), "w") as f:
        f.write("saved_entry=gnulinux-simple\n")
    out = sh([POLICY, "--root", root, "on"])[1]
    ctx.expect(re.search(r"^  7\.3\.9-test \(default boot entry\): vx3$",
                         out, re.M), f"default entry not reported:\n{out}")
    with open(os.path.join(root, CONF.lstrip("/"))) as f, \
            open(SHARED_CONF) as g:
        ctx.expect(f.read() == g.read(), "on --root wrote another file")


def _remove_with_initramfs(host):
    """dpkg -r with the policy on and an initramfs of every installed
    kernel made with it, in a private mount namespace: /etc/modprobe.d
    (this host's plus the policy), /etc/initramfs-tools (this host's with
    MODULES=list), /boot and /var/lib/initramfs-tools are directories of
    the log directory. Returns, for each kernel, whether its image held
    etc/modprobe.d/vx3.conf before and after."""
    w = os.path.join(host.logdir, "purge")
    sh(["rm", "-rf", w])
    polconf = os.path.join(host.logdir, "policy-root") + CONF
    kvers = sorted(k for k in os.listdir("/lib/modules")
                   if os.path.exists(f"/lib/modules/{k}/modules.dep"))
    # update-initramfs -k all finds the kernels by their images
    # (linux-version list) and the images to update in /boot
    cfg = "\n        ".join(f"cp {_kconfig(k)} {w}/boot/config-{k} && "
                             f"cp {guest_image(k)} {w}/boot/vmlinuz-{k}"
                             for k in kvers)
    mk = " && ".join(f"update-initramfs -c -k {k} >/dev/null" for k in kvers)
    has = " ; ".join(f"echo {k} $1 $(lsinitramfs /boot/initrd.img-{k} | "
                     f"grep -c '^etc/modprobe.d/vx3.conf$')" for k in kvers)
    script = f"""set -e
        mount --make-rprivate /
        mkdir -p {w}/boot {w}/state {w}/modprobe.d
        cp -a /etc/initramfs-tools {w}/conf
        sed -i 's/^MODULES=.*/MODULES=list/' {w}/conf/initramfs.conf
        {cfg}
        cp -a /etc/modprobe.d/. {w}/modprobe.d/
        cp {polconf} {w}/modprobe.d/vx3.conf
        mount --bind {w}/modprobe.d /etc/modprobe.d
        mount --bind {w}/conf /etc/initramfs-tools
        mount --bind {w}/boot /boot
        mkdir -p /var/lib/initramfs-tools
        mount --bind {w}/state /var/lib/initramfs-tools
        {mk}
        has() {{ {has} ; }}
        has before
        {APT_ENV} dpkg -r {PKG}
        has after
        """
    made = not os.path.exists("/var/lib/initramfs-tools")
    try:
        _, out = sh(["unshare", "-m", "sh", "-c", script], timeout=900)
    finally:
        if made:		# (its mount point, on a host without one)
            os.rmdir("/var/lib/initramfs-tools")
    _log(host, "host-remove.log", out)
    return re.findall(r"^(\S+) (before|after) (\d+)$", out, re.M), out


def test_remove_purge(ctx):
    host, st = ctx.host, ctx.host.state
    t0 = time.monotonic()
    found, out = _remove_with_initramfs(host)
    diag(f"host: dpkg -r {time.monotonic() - t0:.0f}s: {found}")
    kvers = {k for k, _, _ in found}
    ctx.expect(len(kvers) >= 2 and
               all(n == "1" for _, when, n in found if when == "before"),
               f"the policy's initramfs images lack vx3.conf:\n{out}")
    ctx.expect(all(n == "0" for _, when, n in found if when == "after"),
               f"dpkg -r left vx3.conf in an initramfs:\n{out}")
    left = (glob.glob("/lib/modules/*/updates/dkms/vx3.ko*") +
            glob.glob("/var/lib/dkms/vx3") + glob.glob("/usr/src/vx3-*") +
            glob.glob(CONF) + glob.glob(POLICY))
    ctx.expect(not left, f"dpkg -r {PKG} left {left}")
    ctx.expect("vx3" not in sh("dkms status")[1], "dkms status lists vx3")
    for d in glob.glob("/lib/modules/*/modules.dep"):
        with open(d) as f:
            ctx.expect("vx3.ko" not in f.read(), f"{d} still lists vx3")
    _dpkg(host, f"--purge {PKG}", "host-remove.log")
    ctx.expect(not _installed(), f"{PKG} still known to dpkg after purge")
    _purge(host)	# dkms's signing key, if this run made it; the marker
    ctx.expect(sorted(p for p in MOK if os.path.exists(p)) ==
               sorted(st["mok_before"]), "dkms signing key state changed")
    now = _moddirs()
    ctx.expect(now == st["moddirs"], f"/lib/modules differs from before "
               f"the installation: {st['moddirs']} -> {now}")
