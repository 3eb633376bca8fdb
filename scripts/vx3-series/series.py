#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""The vx3 netdev patch series: generate it and run NIPA's checks on it.

  series.py make           derive the series from the driver files and
                           series.txt, commit it on Debian's linux-source
                           7.3, write build/series/*.patch, apply them
                           with git am and check that the result is the
                           repository's driver, docs and MAINTAINERS entry
  series.py check          the identity checks, make, then the per-patch
                           checks (TAP); the driver builds at the last
                           patch, on x86_64
  series.py check --full   the same, with the driver built at every
                           patch (bisectable) and on i386 as well
  series.py units FILE     list the units series.txt can name in FILE
  series.py tree           print the path of the cached kernel tree

The patches are from and signed off by the poster, VX3_POSTER="Name
<address>" or else git config user.name/user.email, who is also the M:
of the MAINTAINERS entry; make and check refuse a placeholder identity
unless --dry-run (or VX3_SERIES_DRY_RUN=1) asks for patches marked as not
for posting (README, "The poster's identity").

The kernel tree, two configured build directories (x86_64 and i386
allmodconfig after modules_prepare) and a ccache live in
$VX3_SERIES_CACHE (default /var/cache/vx3/series-7.3) and are made once.
"""

import argparse
import csv
import fcntl
import glob
import hashlib
import os
import re
import shutil
import subprocess
import sys
import tempfile
import textwrap
import time
from email.header import decode_header, make_header
from email.utils import parseaddr

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import vx3series  # noqa: E402

if __name__ == "__main__":
    # The identity checks import vmxnet3_series, which imports this module
    sys.modules.setdefault("series", sys.modules[__name__])

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))
# The base of the series: Debian's linux-source of the target kernel
# (scripts/vx3-deps.sh installs it). The cache is per base, so that the
# tree and build directories of an older base are never taken for it.
SRC_PKG = "linux-source-7.3"
SRC_TAR = f"/usr/src/{SRC_PKG}.tar.xz"
CACHE = os.environ.get("VX3_SERIES_CACHE", "/var/cache/vx3/series-7.3")
TREE = os.path.join(CACHE, "linux")
OUTDIR = os.path.join(ROOT, "build", "series")
LOGDIR = os.path.join(ROOT, "build", "series-check")
BASE_TAG = "vx3-base"
SERIES_TAG = "vx3-series"
MAX_PATCHES = 15
VMWARE = "drivers/net/ethernet/vmware"
# Bumped when the recipe of a cached build directory changes
OUT_RECIPE = "allmodconfig -WERROR modules_prepare v1"
ARCHES = ("x86_64", "i386")
# NIPA's tests/patch/checkpatch/checkpatch.sh
CHECKPATCH_IGNORE = ("COMMIT_LOG_LONG_LINE,MACRO_ARG_REUSE,"
                     "ALLOC_SIZEOF_STRUCT,NO_AUTHOR_SIGN_OFF,GIT_COMMIT_ID,"
                     "CAMELCASE,FILE_PATH_CHANGES,BAD_REPORTED_BY_LINK")
JOBS = str(os.cpu_count() or 1)
# Kernel scripts run "python3" (spdxcheck.py, checkpatch's codespell
# lookup, Sphinx): it must be Debian's, which has the packages of make deps
os.environ["PATH"] = "/usr/bin:/bin:" + os.environ.get("PATH", "")
CC = "ccache gcc" if shutil.which("ccache") else "gcc"


class Fail(Exception):
    pass


def log(msg):
    print(f"# series: {msg}", file=sys.stderr, flush=True)


def run(cmd, cwd=TREE, env=None, check=True, out=None, inp=None):
    """Run a command; its output goes to the file out, else is returned."""
    full_env = dict(os.environ)
    full_env.update(env or {})
    with open(out, "a") if out else open(os.devnull, "w") as f:
        p = subprocess.run(cmd, cwd=cwd, env=full_env, input=inp, text=True,
                           stdout=subprocess.PIPE if not out else f,
                           stderr=subprocess.STDOUT if out else
                           subprocess.PIPE)
    if check and p.returncode:
        msg = (p.stderr or "").strip()[-2000:] if not out else \
            f"see {out}"
        raise Fail(f"{' '.join(cmd)} failed ({p.returncode}): {msg}")
    return p


def git(*args, **kw):
    return run(["git", *args], **kw)


# Who posts a series: the patches' author, committer and Signed-off-by,
# and the M: line of vx3's MAINTAINERS entry. The repository names no
# person (its MAINTAINERS entry has no M: line): VX3_POSTER="Name
# <address>", else git config user.name and user.email. A placeholder
# identity is refused unless a dry run is asked for.
POSTER_VAR = "VX3_POSTER"
DRY_RUN_VAR = "VX3_SERIES_DRY_RUN"
# The identity of a dry run when none is set at all
DRY_RUN_POSTER = "vx3 dry run <dry-run@vx3.invalid>"
# Names reserved for documentation and tests (RFC 2606, RFC 6761)
RESERVED_DOMAIN_RE = re.compile(
    r"(?:^|\.)(?:example\.(?:org|com|net)|example|invalid|test|localhost)$",
    re.I)
# The project's old placeholder, a list rather than a person
OLD_PLACEHOLDER_LOCAL = "vx3-devel"
IDENT_RE = re.compile(r"^([^<>@\s][^<>@]*?)\s*<([^<>\s@]+)@([^<>\s@]+)>$")
ADDRESS_RE = re.compile(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+")


def address_placeholder(addr):
    """Why an e-mail address is no person's address, or None."""
    local, _, domain = addr.rpartition("@")
    domain = domain.rstrip(".")
    if local.lower() == OLD_PLACEHOLDER_LOCAL:
        return "it is the old project placeholder address"
    if RESERVED_DOMAIN_RE.search(domain):
        return (f"{domain} is reserved for examples and tests (RFC 2606, "
                "RFC 6761)")
    if "." not in domain:
        return f"{domain} is not a domain of the Internet"
    return None


class Poster:
    """The identity a series is written with: who ("Name <address>"),
    where it came from, and why it is a placeholder (None if it is not)."""

    def __init__(self, who, source):
        self.source = source
        if not who:
            self.who = DRY_RUN_POSTER
            self.placeholder = (f"no identity is set ({POSTER_VAR}, git "
                                "config user.name and user.email)")
            return
        self.who = who
        m = IDENT_RE.match(who)
        if not m:
            raise Fail(f"{source}: {who!r} is not 'Name <address>'")
        self.placeholder = address_placeholder(f"{m.group(2)}@{m.group(3)}")


def resolve_poster(env=None):
    """The poster's identity: ${VX3_POSTER}, else git config user.name
    and user.email of the repository (env: the environment to read)."""
    env = dict(os.environ if env is None else env)
    who = env.get(POSTER_VAR, "").strip()
    if who:
        return Poster(who, POSTER_VAR)
    vals = []
    for key in ("user.name", "user.email"):
        p = subprocess.run(["git", "config", key], cwd=ROOT, env=env,
                           text=True, stdout=subprocess.PIPE,
                           stderr=subprocess.DEVNULL)
        vals.append(p.stdout.strip() if p.returncode == 0 else "")
    src = "git config user.name/user.email"
    if not all(vals):
        return Poster(None, src)
    return Poster(f"{vals[0]} <{vals[1]}>", src)


def dry_run_asked(args=None):
    """--dry-run, or VX3_SERIES_DRY_RUN set (and not 0)."""
    return bool(getattr(args, "dry_run", False)) or \
        os.environ.get(DRY_RUN_VAR, "0").strip() not in ("", "0")


def get_poster(args):
    """The poster for a run: a placeholder is refused (Fail) unless a dry
    run is asked for (args.dry_run or VX3_SERIES_DRY_RUN)."""
    poster = resolve_poster()
    if poster.placeholder and not dry_run_asked(args):
        raise Fail(
            "refusing to write patches from and signed off by a "
            f"placeholder: {poster.who} ({poster.source}): "
            f"{poster.placeholder}. The patches' From:, Signed-off-by and "
            "the MAINTAINERS M: line are the poster's identity: set "
            f"{POSTER_VAR}=\"Your Name <your address>\" (or git config "
            "user.name and user.email), or ask for a dry run "
            f"({DRY_RUN_VAR}=1 or --dry-run) to write patches marked as "
            "not for posting.")
    return poster


def dry_run_note(poster):
    """The mark of patches written with a placeholder identity."""
    return (f"DRY RUN, not for posting: these patches are from and signed "
            f"off by a placeholder, {poster.who} ({poster.source}: "
            f"{poster.placeholder}). Set {POSTER_VAR}=\"Your Name <your "
            "address>\" (or git config user.name and user.email) and make "
            "them again.")


def mark_dry_run(patch, poster):
    """Put the dry-run note below a patch's --- line, where git am ignores
    it."""
    with open(patch, encoding="utf-8") as f:
        lines = f.read().split("\n")
    i = lines.index("---")
    lines.insert(i + 1, f"DRY RUN, not for posting ({poster.who} is a "
                 "placeholder)")
    with open(patch, "w", encoding="utf-8") as f:
        f.write("\n".join(lines))


def placeholder_addresses(outdir):
    """['file: address (why)'] for every placeholder address in the files
    of outdir."""
    bad = []
    for path in sorted(glob.glob(os.path.join(outdir, "*"))):
        with open(path, encoding="utf-8", errors="replace") as f:
            text = f.read()
        for addr in sorted(set(ADDRESS_RE.findall(text))):
            why = address_placeholder(addr)
            if why:
                bad.append(f"{os.path.basename(path)}: {addr} ({why})")
        if f"{OLD_PLACEHOLDER_LOCAL}@" in text.lower():
            bad.append(f"{os.path.basename(path)}: names "
                       f"{OLD_PLACEHOLDER_LOCAL}@")
    return bad


def maintainers_entry(entry, who):
    """vx3's MAINTAINERS entry as the series carries it: the repository's,
    which names no person, with the poster's M: line below the title."""
    lines = entry.split("\n")
    if any(x.startswith("M:") for x in lines):
        raise Fail("MAINTAINERS has an M: line: the repository names no "
                   "maintainer, make series adds the poster's "
                   f"({POSTER_VAR})")
    return "\n".join(lines[:1] + [f"M:\t{who}"] + lines[1:])


def ident_env(who, date):
    name, email = re.match(r"(.*?)\s*<(.*)>", who).groups()
    return {"GIT_AUTHOR_NAME": name, "GIT_AUTHOR_EMAIL": email,
            "GIT_COMMITTER_NAME": name, "GIT_COMMITTER_EMAIL": email,
            "GIT_AUTHOR_DATE": date, "GIT_COMMITTER_DATE": date}


# ---------------------------------------------------------------------------
# The cached kernel tree and build directories


def tar_stamp():
    if not os.path.exists(SRC_TAR):
        raise Fail(f"{SRC_TAR} is missing: run make deps")
    st = os.stat(SRC_TAR)
    ver = run(["dpkg-query", "-W", "-f=${Version}", SRC_PKG],
              cwd="/", check=False).stdout or "unknown"
    return f"{SRC_PKG} {ver} {st.st_size} {int(st.st_mtime)}"


def read_stamp(path):
    try:
        with open(path, encoding="utf-8") as f:
            return f.read().strip()
    except OSError:
        return None


def write_stamp(path, text):
    with open(path, "w", encoding="utf-8") as f:
        f.write(text + "\n")


def ensure_tree(timing):
    """Extract linux-source and commit it as the base, once."""
    stamp = tar_stamp()
    if read_stamp(os.path.join(CACHE, "linux.stamp")) == stamp and \
            os.path.isdir(os.path.join(TREE, ".git")):
        return
    t0 = time.time()
    log(f"extracting {SRC_TAR} into {TREE} (once)")
    tmp = TREE + ".new"
    shutil.rmtree(tmp, ignore_errors=True)
    os.makedirs(tmp)
    run(["tar", "-xJf", SRC_TAR, "-C", tmp, "--strip-components=1"],
        cwd=CACHE)
    log("committing it as the base of the series")
    git("init", "-q", cwd=tmp)
    for k, v in (("gc.auto", "0"), ("maintenance.auto", "false"),
                 ("core.autocrlf", "false"), ("advice.detachedHead",
                                              "false")):
        git("config", k, v, cwd=tmp)
    # Debian's linux-source ignores everything at the top level
    git("add", "-f", "-A", cwd=tmp)
    env = ident_env("Debian linux-source <debian-kernel@lists.debian.org>",
                    "2000-01-01T00:00:00Z")
    git("commit", "-q", "-m", f"{stamp.rsplit(' ', 2)[0]}\n\n"
        f"Extracted from {SRC_TAR}.", cwd=tmp, env=env)
    git("tag", BASE_TAG, cwd=tmp)
    shutil.rmtree(TREE, ignore_errors=True)
    os.rename(tmp, TREE)
    write_stamp(os.path.join(CACHE, "linux.stamp"), stamp)
    timing.append(("extract and commit linux-source", time.time() - t0))


def out_dir(arch):
    return os.path.join(CACHE, f"out-{arch}")


def ensure_out(arch, timing):
    """Configure (allmodconfig, as NIPA) and modules_prepare, once."""
    stamp = f"{tar_stamp()} {OUT_RECIPE}"
    out = out_dir(arch)
    if read_stamp(out + ".stamp") == stamp:
        return
    t0 = time.time()
    log(f"preparing the {arch} build directory {out} (once)")
    git("checkout", "-q", "-f", "--detach", BASE_TAG)
    shutil.rmtree(out, ignore_errors=True)
    os.makedirs(out)
    logf = out + ".log"
    if os.path.exists(logf):
        os.unlink(logf)
    mk = ["make", f"O={out}", f"ARCH={arch}"]
    run(mk + ["allmodconfig"], out=logf)
    run(["scripts/config", "--file", f"{out}/.config", "-d", "WERROR"],
        out=logf)
    run(mk + ["olddefconfig"], out=logf)
    run(mk + [f"-j{JOBS}", "modules_prepare"], out=logf)
    write_stamp(out + ".stamp", stamp)
    timing.append((f"modules_prepare {arch}", time.time() - t0))


# ---------------------------------------------------------------------------
# Edits of kernel files that are not in the repository


HOOKS = (
    # kernel file, the series file that brings the line, line, siblings
    ("drivers/net/ethernet/Kconfig", f"{VMWARE}/Kconfig",
     f'source "{VMWARE}/Kconfig"',
     r'^source "drivers/net/ethernet/([^/"]+)/Kconfig"$'),
    ("drivers/net/ethernet/Makefile", f"{VMWARE}/Makefile",
     "obj-$(CONFIG_NET_VENDOR_VMWARE) += vmware/",
     r"^obj-\$\(CONFIG_NET_VENDOR_\w+\) \+= ([\w-]+)/$"),
    ("Documentation/networking/device_drivers/ethernet/index.rst",
     "Documentation/networking/device_drivers/ethernet/vmware/vx3.rst",
     "   vmware/vx3", r"^   ([a-z0-9_-]+/\S+)$"),
)


def insert_sorted(text, line, sibling_re, what):
    """Insert line after the sibling line with the greatest key below its
    own (the lists are not strictly sorted, so 'first greater' is not
    reliable)."""
    lines = text.split("\n")
    rx = re.compile(sibling_re)
    key = rx.match(line).group(1)
    best = None
    for i, x in enumerate(lines):
        m = rx.match(x)
        if not m:
            continue
        if m.group(1) == key:
            raise Fail(f"{what} already has {line!r}")
        if m.group(1) < key and (best is None or
                                 m.group(1) > rx.match(lines[best]).group(1)):
            best = i
    if best is None:
        raise Fail(f"{what}: no place for {line!r}")
    lines.insert(best + 1, line)
    return "\n".join(lines)


def maintainers_sections(lines):
    """Indices of section title lines of the kernel's MAINTAINERS."""
    return [i for i in range(1, len(lines) - 1)
            if not lines[i - 1].strip() and lines[i].strip() and
            not lines[i].startswith("\t") and
            re.match(r"^[A-Z]:\t", lines[i + 1])]


def insert_maintainers(kernel, entry):
    """Insert vx3's entry as a section in title order."""
    lines = kernel.split("\n")
    elines = entry.rstrip("\n").split("\n")
    title = elines[0]
    titles = maintainers_sections(lines)
    names = [lines[i] for i in titles]
    if title in names:
        raise Fail(f"MAINTAINERS already has a section {title!r}")
    lower = [i for i in titles if lines[i] < title]
    if not lower:
        raise Fail("MAINTAINERS: no place for the vx3 entry")
    prev = max(lower, key=lambda i: lines[i])
    nxt = titles.index(prev) + 1
    if nxt < len(titles) and lines[titles[nxt]] < title:
        raise Fail(f"MAINTAINERS: sections {lines[prev]!r} and "
                   f"{lines[titles[nxt]]!r} are not in order")
    # The section ends at the next blank line
    end = prev
    while end < len(lines) and lines[end].strip():
        end += 1
    lines[end:end] = [""] + elines
    return "\n".join(lines)


def base_file(path):
    return git("show", f"{BASE_TAG}:{path}").stdout


def kernel_files(version, who):
    """The kernel tree's files at one patch: {path: text or None}; who is
    the poster, the M: of vx3's MAINTAINERS entry."""
    files = {}
    for path, text in version.items():
        if path == "MAINTAINERS":
            if text is not None:
                files[path] = insert_maintainers(
                    base_file(path), maintainers_entry(text, who))
        else:
            files[path] = text
    for kfile, trigger, line, sib in HOOKS:
        if version.get(trigger) is not None:
            files[kfile] = insert_sorted(base_file(kfile), line, sib, kfile)
    return files


# ---------------------------------------------------------------------------
# make series


# The committed make bench table (with its date and setup) the cover
# letter carries when there is no local make bench run
BENCH_COMMITTED = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                               "bench-results.txt")


def fmt_med(v, nd):
    return "-" if v is None else f"{v:.{nd}f}"


def local_bench_table(md):
    """A compact table (medians) of a local make bench run, from the
    summary.csv next to its performance.md; None if it has no TCP cells."""
    path = os.path.join(os.path.dirname(md), "summary.csv")
    try:
        with open(path, encoding="utf-8", newline="") as f:
            rows = list(csv.DictReader(f))
    except OSError:
        return None
    med, reps = {}, 0
    for r in rows:
        # "lro" since the device's aggregation is LRO; older runs: "gro"
        agg = r.get("lro", r.get("gro", ""))
        med[(r["exp"], r["par"], agg, r["cell"], r["metric"])] = \
            float(r["median"])
        reps = max(reps, int(r["n"]))

    def m(exp, par, agg, cell, metric):
        return med.get((exp, par, agg, cell, metric))
    pars = sorted({k[1] for k in med if k[0] == "rx"}, key=int,
                  reverse=True)
    tpar = sorted({k[1] for k in med if k[0] == "tx"})
    hdr = (f"  {'':24}{'Gbit/s':>8}{'':8}{'vCPU-s/GB':>11}{'':9}"
           f"{'retrans':>8}",
           f"  {'':24}{'tap':>8}{'goodput':>8}{'tap':>10}{'goodput':>10}"
           f"{'%':>8}")
    out = []

    def tcp_line(label, key):
        return (f"    {label:22}{fmt_med(m(*key, 'gbps'), 3):>8}"
                f"{fmt_med(m(*key, 'good_gbps'), 3):>8}"
                f"{fmt_med(m(*key, 'vcpu_s_per_gb'), 2):>10}"
                f"{fmt_med(m(*key, 'vcpu_s_per_gb_good'), 2):>10}"
                f"{fmt_med(m(*key, 'retrans_pct'), 2):>8}")
    for par in pars:
        out.append(f"  Receive, iperf -P {par}, peer -> guest")
        out += hdr
        for agg in ("0", "1"):
            for cell, label in (("copy", "vx3 copy"),
                                ("bskb", "vx3 build_skb"),
                                ("vmxnet3", "vmxnet3")):
                out.append(tcp_line(f"lro {'on' if agg == '1' else 'off'} "
                                    f"{label}", ("rx", par, agg, cell)))
        out.append("")
    for par in tpar:
        out.append(f"  Transmit, iperf -P {par}, guest -> peer")
        out += hdr
        for cell in ("vx3", "vmxnet3"):
            out.append(tcp_line(cell, ("tx", par, "", cell)))
        out.append("")
    if any(k[0] == "fwd" for k in med):
        out.append("  Forwarding 64-byte UDP frames (trafgen), "
                   "peer 1 -> guest -> peer 2")
        out.append(f"  {'':24}{'offered kpps':>14}{'forwarded kpps':>16}"
                   f"{'vCPU-s/Mpkt':>13}")
        for cell, label in (("vx3", "vx3 rx-copybreak 256"),
                            ("bskb", "vx3 build_skb"),
                            ("vmxnet3", "vmxnet3")):
            key = ("fwd", "1", "", cell)
            off, fwd = m(*key, "offered_pps"), m(*key, "fwd_pps")
            out.append(f"    {label:22}"
                       f"{fmt_med(off / 1e3 if off else None, 1):>14}"
                       f"{fmt_med(fwd / 1e3 if fwd else None, 2):>16}"
                       f"{fmt_med(m(*key, 'vcpu_s_per_mpkt'), 1):>13}")
        out.append("")
    if not out:
        return None
    return reps, "\n".join(out).rstrip("\n")


def bench_table():
    """The make bench table for the cover letter: of the latest local run
    if there is one (saying so), else the committed one."""
    # make bench writes build/bench/<YYYYmmdd-HHMMSS>/
    found = sorted(f for f in glob.glob(os.path.join(
        ROOT, "build", "bench", "*", "performance.md"))
        if re.fullmatch(r"\d{8}-\d{6}", os.path.basename(
            os.path.dirname(f))))
    local = local_bench_table(found[-1]) if found else None
    if local:
        md = found[-1]
        with open(md, encoding="utf-8") as f:
            text = f.read()
        env = dict(re.findall(r"(?m)^- (date|git|qemu|host_cpu|"
                              r"guest_kernel): (.*)$", text))
        cmd = re.search(r"(?m)^# runs (.*)$", text)
        reps, table = local
        rel = os.path.relpath(os.path.dirname(md), ROOT)
        intro = (f"make bench results of a local run, not the committed "
                 f"table ({rel}/, {env.get('date', '?')}, git "
                 f"{env.get('git', '?')}; {env.get('qemu', '?')}, "
                 f"{env.get('host_cpu', '?')}, guest "
                 f"{env.get('guest_kernel', '?')}; "
                 f"{cmd.group(1) if cmd else 'bench.py'}). Medians of "
                 f"{reps} repetition{'s' if reps != 1 else ''}; Gbit/s "
                 "and vCPU-s/GB (QEMU's vCPU thread CPU time per GB) of "
                 "the bytes on the peer's tap, retransmissions included, "
                 "and of TCP goodput; retrans: the sender's TCP "
                 "retransmitted segments in % of those it sent. All "
                 f"columns with [min-max] are in {rel}/results.txt:")
        return textwrap.fill(intro, 72) + f"\n\n{table}"
    try:
        with open(BENCH_COMMITTED, encoding="utf-8") as f:
            return f.read().rstrip("\n")
    except OSError:
        raise Fail(f"{os.path.relpath(BENCH_COMMITTED, ROOT)} is missing: "
                   "the cover letter needs the measured table")


def commit_message(p, who):
    return (f"{p.subject}\n\n" + "\n".join(p.body) +
            f"\n\nSigned-off-by: {who}\n")


def make_series(timing, poster, outdir=OUTDIR):
    """Generate the series with poster's identity into outdir, apply and
    verify it. Returns (series, commits, patches)."""
    t0 = time.time()
    series = vx3series.load(ROOT)
    who = poster.who
    date = git("log", "-1", "--format=%cI", cwd=ROOT).stdout.strip()
    env = ident_env(who, date)
    n = series.n
    if n > MAX_PATCHES:
        raise Fail(f"{n} patches; netdev takes at most {MAX_PATCHES}")

    # Commit every patch on the base, in a private index: the work tree
    # of the big kernel tree is not touched (and not rescanned) here
    idx = {"GIT_INDEX_FILE": os.path.join(CACHE, "series.index")}
    git("read-tree", BASE_TAG, env=idx)
    parent = git("rev-parse", BASE_TAG).stdout.strip()
    prev = {}
    for k in range(1, n + 1):
        files = kernel_files(series.versions[k], who)
        info = []
        for path, text in sorted(files.items()):
            if prev.get(path) == text:
                continue
            if text is None:
                info.append(f"0 {'0' * 40}\t{path}")
            else:
                blob = git("hash-object", "-w", "--stdin", inp=text
                           ).stdout.strip()
                info.append(f"100644 {blob}\t{path}")
        prev = files
        if not info:
            raise Fail(f"patch {k} changes nothing")
        git("update-index", "--index-info", inp="\n".join(info) + "\n",
            env=idx)
        tree = git("write-tree", env=idx).stdout.strip()
        parent = git("commit-tree", tree, "-p", parent, "-F", "-",
                     inp=commit_message(series.spec.patches[k - 1], who),
                     env=env).stdout.strip()
    built = parent
    built_tree = git("rev-parse", f"{built}^{{tree}}").stdout.strip()

    # Patches and cover letter
    shutil.rmtree(outdir, ignore_errors=True)
    git("format-patch", "-q", "--cover-letter",
        "--subject-prefix=PATCH net-next", f"--base={BASE_TAG}", "-o", outdir,
        f"{BASE_TAG}..{built}", env=env)
    patches = sorted(glob.glob(os.path.join(outdir, "*.patch")))
    cover = patches.pop(0)
    with open(cover, encoding="utf-8") as f:
        text = f.read()
    body = "\n".join(series.spec.cover_body).replace("{bench}",
                                                      bench_table())
    if poster.placeholder:
        body = textwrap.fill(dry_run_note(poster), 72) + "\n\n" + body
        for p in patches:
            mark_dry_run(p, poster)
    if "*** SUBJECT HERE ***" not in text or "*** BLURB HERE ***" not in text:
        raise Fail("unexpected cover letter template from git format-patch")
    text = text.replace("*** SUBJECT HERE ***", series.spec.cover_subject)
    text = text.replace("*** BLURB HERE ***", body)
    with open(cover, "w", encoding="utf-8") as f:
        f.write(text)

    # What a reviewer gets: the patches applied with git am
    git("checkout", "-q", "-f", "--detach", BASE_TAG)
    git("clean", "-q", "-f", "-d", "-x", "--", VMWARE, "Documentation/"
        "networking/device_drivers/ethernet/vmware")
    git("am", "-q", "--no-3way", *patches, env=env)
    if git("rev-parse", "HEAD^{tree}").stdout.strip() != built_tree:
        raise Fail("git am of build/series does not give the tree the "
                   "series was made from")
    git("tag", "-f", SERIES_TAG)
    commits = git("rev-list", "--reverse",
                  f"{BASE_TAG}..{SERIES_TAG}").stdout.split()
    verify_final(series, who)
    timing.append(("make series", time.time() - t0))
    return series, commits, patches


def verify_final(series, who):
    """The applied series must give exactly the repository's files (and
    vx3's MAINTAINERS entry with the poster's M: line)."""
    problems = []
    for path, text in series.files.items():
        if path == "MAINTAINERS":
            want = insert_maintainers(base_file(path),
                                      maintainers_entry(text, who))
        else:
            want = text
        try:
            got = git("show", f"{SERIES_TAG}:{path}").stdout
        except Fail:
            got = None
        if got != want:
            problems.append(f"{path} differs from the repository")
    changed = git("diff", "--name-only", BASE_TAG, SERIES_TAG).stdout.split()
    allowed = set(series.files) | {h[0] for h in HOOKS}
    for path in changed:
        if path not in allowed:
            problems.append(f"the series changes {path}, which is not in "
                            "the repository")
    for kfile, trigger, line, sib in HOOKS:
        got = git("show", f"{SERIES_TAG}:{kfile}").stdout
        if got != insert_sorted(base_file(kfile), line, sib, kfile):
            problems.append(f"{kfile} is not the base plus {line!r}")
    if problems:
        raise Fail("applying the series does not reproduce the tree:\n  " +
                   "\n  ".join(problems))


def patch_stats(commits):
    """Lines 'NN/MM subject' and 'N files changed, ...' for the report."""
    out = []
    for i, c in enumerate(commits, 1):
        stat = git("show", "--format=%s", "--shortstat", c).stdout.strip()
        subj, _, short = stat.partition("\n")
        out.append(f"{i:2}/{len(commits)} {subj}\n       {short.strip()}")
    return out


# ---------------------------------------------------------------------------
# Per-patch checks


# libgcc's helpers for arithmetic the CPU lacks: the kernel does not link
# libgcc nor export these (on i386 a u64 division must use div_u64()), so a
# module that calls one cannot load
LIBGCC_HELPER = re.compile(
    r"^__(u?(div|mod)[dt]i3|u?divmod[dt]i4|(ashl|ashr|lshr)[dt]i3|"
    r"u?cmp[dt]i2|mul[dt]i3|neg[dt]i2|(clz|ctz|ffs|popcount|parity)[dt]i2|"
    r"(add|sub|mul|div)[sdtx]f3|neg[sdtx]f2|float(un)?[sdt]i[sdtx]f|"
    r"fix(uns)?[sdtx]f[sdt]i|"
    r"(extend|trunc)[sdtx]f[sdtx]f2|(eq|ne|lt|le|gt|ge|unord)[sdtx]f2)$")


class Driver:
    """The driver the per-patch checks build and read: the kernel tree it
    is checked out in, the directory built with M= (relative to the tree),
    the Kconfig symbol set to m for it and its module object (relative
    path without .o)."""

    def __init__(self, tree, mdir, config, obj):
        self.tree, self.mdir, self.config, self.obj = tree, mdir, config, obj
        self.ko = os.path.basename(obj) + ".ko"


VX3 = Driver(TREE, VMWARE, "VX3", f"{VMWARE}/vx3/vx3")


def libgcc_uses(obj, ko="vx3.ko"):
    """Compiler runtime helpers the module calls. modpost would report them
    as undefined, but without vmlinux it reports every symbol (and only the
    first ten), so its undefined-symbol warnings are dropped and this
    check takes their place for what matters here."""
    p = run(["nm", "-u", obj], check=False)
    return [f"{ko} calls {sym}, a libgcc helper the kernel does not "
            "provide" for sym in (x.split()[-1] for x in p.stdout.split("\n")
                                  if x.strip())
            if LIBGCC_HELPER.match(sym)]


BUILD_NOISE = re.compile(
    r"undefined!$|Module\.symvers is missing|^\s+(Modules may not|You may "
    r"get|You can set|if you want)|suppressed \d+ unresolved symbol")


def warning_key(line):
    """A warning line without its line and column numbers, to compare the
    warnings of two builds (or kernel-doc runs) of moved code."""
    return re.sub(r"^(\S+?):\d+(:\d+)?:", r"\1:", line.strip())


def new_warnings(lines, baseline):
    """The lines that are not in baseline (a list of earlier lines, each
    allowing one occurrence), all of them if baseline is None."""
    if baseline is None:
        return list(lines)
    left = {}
    for x in baseline:
        left[warning_key(x)] = left.get(warning_key(x), 0) + 1
    out = []
    for x in lines:
        k = warning_key(x)
        if left.get(k):
            left[k] -= 1
        else:
            out.append(x)
    return out


def build_driver(arch, sparse, logf, drv=VX3, baseline=None):
    """W=1 build of the driver directory against a prepared tree; returns
    the problem lines (compiler, sparse, objtool and modpost warnings), but
    not those that baseline (the warnings of the base build) has as well.
    Without vmlinux, modpost cannot resolve symbols: its warnings about
    them are dropped, and libgcc_uses() checks the undefined symbols."""
    warnings, bad = build_warnings(arch, sparse, logf, drv)
    return new_warnings(warnings, baseline) + bad


def build_warnings(arch, sparse, logf, drv=VX3):
    """The build of build_driver(): (warning lines, other problems)."""
    git("clean", "-q", "-f", "-d", "-x", "--", drv.mdir, cwd=drv.tree)
    cmd = ["make", f"-j{JOBS}", f"O={out_dir(arch)}", f"ARCH={arch}",
           f"M={drv.tree}/{drv.mdir}", f"CC={CC}", f"CONFIG_{drv.config}=m",
           "W=1", "KBUILD_MODPOST_WARN=1", "modules"]
    if sparse:
        cmd.insert(-1, "C=1")
    env = {"CCACHE_DIR": os.path.join(CACHE, "ccache"),
           "CCACHE_MAXSIZE": "2G", "CCACHE_BASEDIR": drv.tree}
    p = run(cmd, env=env, check=False, out=logf)
    with open(logf, encoding="utf-8", errors="replace") as f:
        lines = f.read().split("\n")
    warnings = [x for x in lines if re.search(r"warning|error", x, re.I) and
                not BUILD_NOISE.search(x)]
    bad = []
    if p.returncode:
        bad.append(f"make exited with {p.returncode}")
    if not any(drv.ko in x for x in lines if "LD [M]" in x):
        bad.append(f"{drv.ko} was not linked")
    else:
        bad += libgcc_uses(os.path.join(drv.tree, drv.obj + ".o"), drv.ko)
    return warnings, bad


def touched_files(commit, tree=TREE):
    return git("show", "--format=", "--name-only", commit,
               cwd=tree).stdout.split()


def check_checkpatch(patch, logf, ignore=()):
    """checkpatch as NIPA runs it; ignore: more message types to ignore."""
    types = ",".join((CHECKPATCH_IGNORE,) + tuple(ignore))
    p = run(["perl", "scripts/checkpatch.pl", "--strict", "--codespell",
             "--max-line-length=80", f"--ignore={types}",
             "--show-types", patch], check=False, out=logf)
    with open(logf, encoding="utf-8") as f:
        text = f.read()
    if p.returncode or "total: 0 errors, 0 warnings, 0 checks" not in text:
        return [x for x in text.split("\n")
                if re.match(r"(WARNING|ERROR|CHECK):", x)] or \
            [f"checkpatch exited with {p.returncode}"]
    return []


def kdoc_output(files, logf, tree=TREE):
    """kernel-doc -Wall -none of files (relative to tree, which is checked
    out): (its output lines, its exit code)."""
    # kernel-doc is a Python script in 7.3 (Perl in 6.12): run it as is
    p = run([os.path.join(TREE, "scripts", "kernel-doc"), "-Wall",
             "-none", *files], cwd=tree, check=False, out=logf)
    with open(logf, encoding="utf-8") as f:
        out = [x for x in f.read().split("\n") if x.strip()]
    return out, p.returncode


def check_kdoc(commit, logf, tree=TREE, baseline=None):
    """kernel-doc on the .c/.h files the patch touches; with baseline
    (lines of an earlier run, e.g. of the base tree), only new lines."""
    files = [f for f in touched_files(commit, tree)
             if f.endswith((".c", ".h")) and
             os.path.exists(os.path.join(tree, f))]
    if not files:
        return []
    out, rc = kdoc_output(files, logf, tree)
    if rc and not out:
        return [f"kernel-doc exited with {rc}"]
    return new_warnings(out, baseline)


def check_nipa_greps(commit, tree=TREE):
    """NIPA's source_inline, header_inline and module_param tests."""
    bad = []
    c_diff = git("show", "--format=", commit, "--", "*.c", cwd=tree).stdout
    h_diff = git("show", "--format=", commit, "--", "*.h", cwd=tree).stdout
    full = git("show", "--format=", commit, cwd=tree).stdout
    bad += [f"inline in a .c file: {x}" for x in c_diff.split("\n")
            if re.match(r"^\+(.*\W|)inline\W", x, re.I)]
    bad += [f"static function without inline in a header: {x}"
            for x in h_diff.split("\n")
            if re.match(r"^\+static (?!(__always_)?inline).*\(", x)]
    bad += [f"module parameter: {x}" for x in full.split("\n")
            if re.match(r"^\+.*module_param", x, re.I)]
    return bad


def check_signoff(commit, tree=TREE):
    """NIPA's verify_signedoff: author and committer signed off."""
    fmt = git("log", "-1", "--format=%an%n%ae%n%cn%n%ce", commit, cwd=tree
              ).stdout.split("\n")
    sob = [x for x in git("log", "-1", "--format=%b", commit, cwd=tree
                          ).stdout.split("\n")
           if re.match(r"^\s*Signed-off-by:", x, re.I)]
    bad = []
    for who, name, email in (("author", fmt[0], fmt[1]),
                             ("committer", fmt[2], fmt[3])):
        if not any(f"<{email}>".lower() in x.lower() or
                   re.search(r":\s*" + re.escape(name) + r"\s*<", x, re.I)
                   for x in sob):
            bad.append(f"{who} Signed-off-by missing")
    return bad


def check_maintainers(commit, logf):
    """NIPA's maintainers test (get_maintainer.pl --self-test, before and
    after), for the sections test; the patterns test of the whole file
    takes minutes, so vx3's own F: patterns are checked the same way
    get_maintainer.pl does against the files of the tree."""
    if "MAINTAINERS" not in touched_files(commit):
        return []
    counts = []
    for rev in (f"{commit}~", commit):
        git("checkout", "-q", "-f", "--detach", rev)
        p = run(["perl", "scripts/get_maintainer.pl", "--self-test=sections"],
                check=False)
        out = (p.stdout or "") + (p.stderr or "")
        with open(logf, "a", encoding="utf-8") as f:
            f.write(f"== {rev}\n{out}")
        counts.append(len(re.findall(r"(?i)warn|error", out)))
    bad = []
    if counts[1] > counts[0]:
        bad.append(f"get_maintainer.pl --self-test=sections: {counts[0]} "
                   f"warnings before, {counts[1]} after")
    files = git("ls-files").stdout.split("\n")
    entry = git("show", f"{commit}:MAINTAINERS").stdout
    with open(os.path.join(ROOT, "MAINTAINERS"), encoding="utf-8") as f:
        title = f.readline().strip()
    lines = entry.split("\n")
    i = lines.index(title) + 1
    while i < len(lines) and re.match(r"^[A-Z]:", lines[i]):
        m = re.match(r"^[FX]:\s*(\S+)", lines[i])
        if m:
            pat = m.group(1).replace(".", "\\.").replace("*", ".*") \
                .replace("?", ".")
            if os.path.isdir(os.path.join(TREE, m.group(1))):
                pat = re.sub(r"([^/])$", r"\1/", pat)
            if not any(re.match(pat, f) for f in files):
                bad.append(f"MAINTAINERS: no file matches {lines[i]!r}")
        i += 1
    return bad


def check_kconfig(commit, logf, arches):
    """VX3 can be enabled as a module in the allmodconfig trees of arches,
    and Kconfig parses without warnings."""
    if not any(f.endswith("Kconfig") for f in touched_files(commit)):
        return []
    if not os.path.exists(os.path.join(TREE, VMWARE, "Kconfig")):
        return []
    bad = []
    for arch in arches:
        with tempfile.TemporaryDirectory() as tmp:
            cfg = os.path.join(tmp, "config")
            shutil.copy(os.path.join(out_dir(arch), ".config"), cfg)
            run(["scripts/config", "--file", cfg, "-e", "NET_VENDOR_VMWARE",
                 "-m", "VX3"])
            p = run(["make", f"O={out_dir(arch)}", f"ARCH={arch}",
                     f"KCONFIG_CONFIG={cfg}", "olddefconfig"], check=False)
            out = (p.stdout or "") + (p.stderr or "")
            with open(logf, "a", encoding="utf-8") as f:
                f.write(f"== {arch}\n{out}")
            bad += [f"{arch}: {x}" for x in out.split("\n")
                    if re.search(r"warning|error", x, re.I)]
            with open(cfg, encoding="utf-8") as f:
                conf = f.read()
            for want in ("CONFIG_VX3=m", "CONFIG_PAGE_POOL=y"):
                if want not in conf.split("\n"):
                    bad.append(f"{arch}: no {want} after olddefconfig")
    return bad


def check_docs(commit, logf):
    """htmldocs of the device driver docs: no warning about a file the
    patch touches."""
    docs = [f for f in touched_files(commit)
            if f.startswith("Documentation/") and f.endswith(".rst")]
    if not docs:
        return []
    if not shutil.which("sphinx-build"):
        return ["sphinx-build is missing: run make deps"]
    for f in docs:
        # Sphinx rereads only changed files, and warns only when it reads
        os.utime(os.path.join(TREE, f))
    p = run(["make", f"O={os.path.join(CACHE, 'out-docs')}",
             "SPHINXDIRS=networking/device_drivers/ethernet", "htmldocs"],
            check=False, out=logf)
    with open(logf, encoding="utf-8") as f:
        lines = f.read().split("\n")
    bad = [x for x in lines if re.search(r"WARNING|ERROR|SEVERE", x) and
           any(d in x for d in docs)]
    if p.returncode:
        bad.append(f"make htmldocs exited with {p.returncode}")
    return bad


# The builds: x86_64 W=1 and sparse (C=1) at the last patch; with --full
# (make check-reference) also x86_64 W=1 at every earlier patch (the
# series bisects) and i386 W=1 at the last one. The series adds the final
# driver's units patch by patch and never rewrites one, so a construct
# that sparse or a 32-bit build objects to at an earlier patch is in the
# last patch's tree as well; what only an intermediate tree can have (an
# unused or undeclared function) is a W=1 warning on x86_64, which the
# release lane's --full run finds. make check leaves those builds out
# for its 60-minute budget on a fresh machine (README): the i386 tree's
# allmodconfig preparation and the fourteen earlier builds are a third
# of the series' CPU time, in the CPU-bound front of make check.
CHECKS = (
    ("build_x86_64", "x86_64 allmodconfig W=1 build at every patch, no "
     "warnings (and sparse, C=1, at the last patch)"),
    ("build_i386", "i386 allmodconfig W=1 build (at the last patch), no "
     "warnings"),
    ("checkpatch", "checkpatch --strict --codespell --max-line-length=80 "
     "(NIPA's ignores) clean"),
    ("kdoc", "kernel-doc -Wall -none on touched files clean"),
    ("greps", "no inline in .c, no static non-inline in .h, no "
     "module_param"),
    ("signoff", "Signed-off-by of author and committer"),
    ("kconfig", "Kconfig: VX3=m selectable on x86_64 and i386"),
    ("maintainers", "MAINTAINERS self-test and vx3 F: patterns"),
    ("docs", "htmldocs without warnings in touched .rst files"),
)


# What make check's run (without --full) checks instead, and why the rest
# is not there
SHORT = {
    "build_x86_64": ("x86_64 allmodconfig W=1 C=1 build at the last patch, "
                     "no warnings", None),
    "build_i386": (CHECKS[1][1], "make check-reference runs it (series.py "
                   "check --full)"),
    "kconfig": ("Kconfig: VX3=m selectable on x86_64 (i386: make "
                "check-reference)", None),
}


def arches(full):
    """The build directories a run prepares and builds in."""
    return ARCHES if full else ARCHES[:1]


def checks(full):
    """[(name, description, skip reason or None)] of this run."""
    if full:
        return [(n, d, None) for n, d in CHECKS]
    return [(n,) + SHORT.get(n, (d, None)) for n, d in CHECKS]


_versions = {}


def tool_version(cmd):
    if cmd not in _versions:
        p = run(cmd.split(), cwd="/", check=False)
        _versions[cmd] = ((p.stdout or "") + (p.stderr or "")).strip()
    return _versions[cmd]


def rev(spec):
    """Object id of a tree or file at a commit, or '-' if it is absent."""
    p = git("rev-parse", "-q", "--verify", spec, check=False)
    return p.stdout.strip() or "-"


def result_key(name, commit, patch, arches, last=True):
    """Everything the result of an expensive check depends on, hashed: the
    driver files (or the patch, or the docs) at this patch, the kernel
    tree, the build directory, the tools and this script. None for the
    cheap checks, which always run."""
    with open(os.path.abspath(__file__), "rb") as f:
        parts = [name, hashlib.sha1(f.read()).hexdigest(), tar_stamp()]
    if name.startswith("build_"):
        arch = name[len("build_"):]
        parts += [rev(f"{commit}:{VMWARE}"), read_stamp(out_dir(arch) +
                  ".stamp") or "-", CC, tool_version("gcc --version")]
        if arch == "x86_64" and last:
            parts.append(tool_version("sparse --version"))
    elif name == "checkpatch":
        with open(patch, encoding="utf-8") as f:
            text = f.read().split("\n")
        # Not the commit id and date, which change with earlier patches
        text = [x for x in text[1:] if not x.startswith("Date: ")]
        parts += [hashlib.sha1("\n".join(text).encode()).hexdigest(),
                  tool_version("codespell --version")]
    elif name == "docs":
        parts += [rev(f"{commit}:Documentation"),
                  " ".join(touched_files(commit)),
                  tool_version("sphinx-build --version")]
    elif name == "kconfig":
        parts += [rev(f"{commit}:{VMWARE}"),
                  rev(f"{commit}:drivers/net/ethernet/Kconfig"),
                  " ".join(touched_files(commit))]
        parts += [read_stamp(out_dir(a) + ".stamp") or "-" for a in arches]
    elif name == "maintainers":
        parts += [rev(f"{commit}:MAINTAINERS"), rev(f"{commit}~:MAINTAINERS")]
    else:
        return None
    return hashlib.sha1("\n".join(parts).encode()).hexdigest()


def run_checks(commits, patches, timing, full):
    """Run every check of checks(full) on every patch (the builds as
    CHECKS says); returns {check: [(patch, lines)]} and the number of
    results reused. A check that passed before on identical inputs
    (result_key()) is not run again, unless VX3_SERIES_RECHECK=1."""
    os.makedirs(LOGDIR, exist_ok=True)
    resdir = os.path.join(CACHE, "results")
    os.makedirs(resdir, exist_ok=True)
    recheck = os.environ.get("VX3_SERIES_RECHECK") == "1"
    reused = 0
    for f in glob.glob(os.path.join(LOGDIR, "*.log")):
        os.unlink(f)
    results = {c: [] for c, _ in CHECKS}
    spent = {c: 0.0 for c, _ in CHECKS}
    n = len(commits)
    for k, (commit, patch) in enumerate(zip(commits, patches), 1):
        git("checkout", "-q", "-f", "--detach", commit)
        has_driver = os.path.exists(os.path.join(TREE, VMWARE, "vx3",
                                                 "Makefile"))
        last = k == n
        for name, _, skip in checks(full):
            if skip or (name.startswith("build_") and not last and
                        not (full and name == "build_x86_64")):
                continue
            t0 = time.time()
            logf = os.path.join(LOGDIR, f"{k:02d}-{name}.log")
            key = result_key(name, commit, patch, arches(full), last)
            passed = os.path.join(resdir, key) if key else None
            if passed and os.path.exists(passed) and not recheck:
                shutil.copy(passed, logf)
                with open(logf, "a", encoding="utf-8") as f:
                    f.write(f"\n# reused: passed before with identical "
                            f"inputs (key {key})\n")
                reused += 1
                spent[name] += time.time() - t0
                continue
            if name.startswith("build_"):
                if not has_driver:
                    bad = []
                else:
                    arch = name[len("build_"):]
                    bad = build_driver(arch, arch == "x86_64" and last,
                                       logf)
            elif name == "checkpatch":
                bad = check_checkpatch(patch, logf)
            elif name == "kdoc":
                bad = check_kdoc(commit, logf)
            elif name == "greps":
                bad = check_nipa_greps(commit)
            elif name == "signoff":
                bad = check_signoff(commit)
            elif name == "kconfig":
                bad = check_kconfig(commit, logf, arches(full))
            elif name == "maintainers":
                bad = check_maintainers(commit, logf)
                git("checkout", "-q", "-f", "--detach", commit)
            else:
                bad = check_docs(commit, logf)
            spent[name] += time.time() - t0
            if bad:
                results[name].append((k, bad))
            elif passed:
                if os.path.exists(logf):
                    shutil.copy(logf, passed)
                else:
                    write_stamp(passed, "# passed, no output")
        log(f"patch {k}/{n} checked")
    git("clean", "-q", "-f", "-d", "-x", "--", VMWARE)
    for name, _ in CHECKS:
        timing.append((f"check {name}", spent[name]))
    return results, reused


# ---------------------------------------------------------------------------
# Entry points


# ---------------------------------------------------------------------------
# The identity checks (series.py check and vmxnet3_series.py check)


# A poster for the checks, no placeholder: the patches made with it are
# removed after the check
TEST_POSTER = "Vx3 Identity Test <vx3-identity-test@kernel.org>"
# Each must be refused without a dry run
TEST_PLACEHOLDERS = (
    "Vx3 Developers <vx3-devel@example.org>",
    "Some One <some.one@lists.example.com>",
    "Some One <one@example.net>",
    "Seed maintainers <maintainers@users.noreply.a-seed-bc6e5ad9.example>",
    "Some One <one@host.invalid>",
)


def git_config_env(name, email):
    """An environment whose git config has this user.name and user.email
    (over any configuration file) and no VX3_POSTER."""
    env = {k: v for k, v in os.environ.items()
           if k not in (POSTER_VAR, DRY_RUN_VAR) and
           not k.startswith("GIT_CONFIG_")}
    env.update({"GIT_CONFIG_COUNT": "2",
                "GIT_CONFIG_KEY_0": "user.name", "GIT_CONFIG_VALUE_0": name,
                "GIT_CONFIG_KEY_1": "user.email",
                "GIT_CONFIG_VALUE_1": email})
    return env


def resolver_problems():
    """What resolve_poster() gets wrong on the rules of the README."""
    bad = []
    real = git_config_env("Some One", "some.one@kernel.org")
    for who in TEST_PLACEHOLDERS:
        p = resolve_poster(dict(real, **{POSTER_VAR: who}))
        if not p.placeholder or p.who != who or p.source != POSTER_VAR:
            bad.append(f"{POSTER_VAR}={who!r}: not taken as a placeholder")
    p = resolve_poster(dict(real, **{POSTER_VAR: TEST_POSTER}))
    if p.placeholder or p.who != TEST_POSTER:
        bad.append(f"{POSTER_VAR}={TEST_POSTER!r}: {p.placeholder}")
    p = resolve_poster(real)
    if p.placeholder or p.who != "Some One <some.one@kernel.org>":
        bad.append(f"git config user.name/user.email Some One "
                   f"<some.one@kernel.org>: got {p.who} ({p.placeholder})")
    p = resolve_poster(git_config_env("Some One", "one@vx3.example"))
    if not p.placeholder:
        bad.append("git config user.email one@vx3.example: not taken as a "
                   "placeholder")
    p = resolve_poster(git_config_env("", ""))
    if not p.placeholder:
        bad.append("no identity: not taken as a placeholder")
    return bad


def refusal_problems(script, outdir):
    """Run script make with placeholder identities and no dry run: it must
    exit non-zero, name VX3_POSTER and leave outdir as it was."""
    bad = []
    before = {f: os.stat(f).st_mtime_ns
              for f in glob.glob(os.path.join(outdir, "*"))}
    real = git_config_env("Some One", "some.one@kernel.org")
    cases = [(f"{POSTER_VAR}={TEST_PLACEHOLDERS[0]!r}",
              dict(real, **{POSTER_VAR: TEST_PLACEHOLDERS[0]})),
             ("git config user.email maintainers@users.noreply."
              "a-seed-bc6e5ad9.example",
              git_config_env("Seed maintainers", "maintainers@users."
                             "noreply.a-seed-bc6e5ad9.example"))]
    for what, env in cases:
        try:
            # It must refuse at once: this check holds the cache's lock,
            # which a run that does not refuse waits for
            p = subprocess.run([sys.executable, script, "make"], env=env,
                               cwd=ROOT, text=True, timeout=120,
                               stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT)
        except subprocess.TimeoutExpired:
            bad.append(f"{what}: {os.path.basename(script)} make did not "
                       "refuse (still running after 120 s)")
            continue
        if p.returncode == 0:
            bad.append(f"{what}: {os.path.basename(script)} make exited "
                       "with 0")
        elif POSTER_VAR not in p.stdout or DRY_RUN_VAR not in p.stdout:
            bad.append(f"{what}: the refusal does not name {POSTER_VAR} "
                       f"and {DRY_RUN_VAR}: {p.stdout.strip()[-300:]}")
    after = {f: os.stat(f).st_mtime_ns
             for f in glob.glob(os.path.join(outdir, "*"))}
    if after != before:
        bad.append(f"a refused make changed {os.path.relpath(outdir, ROOT)}/")
    return bad


def same_ident(header, who):
    """Whether a From: header's value (RFC 2047 encoded, quoted or not)
    names who ("Name <address>")."""
    got = parseaddr(str(make_header(decode_header(header.strip()))))
    return got == parseaddr(who)


def identity_problems(outdir, patches, who, maintainers=False):
    """Every patch (and the cover letter) is From: who and every patch
    Signed-off-by: who, the MAINTAINERS M: line (with maintainers) is
    who, and no file of outdir has a placeholder address."""
    bad = []
    cover = os.path.join(outdir, "0000-cover-letter.patch")
    m_lines = []
    for p in [cover] + patches:
        name = os.path.basename(p)
        with open(p, encoding="utf-8") as f:
            text = f.read()
        head, _, rest = text.partition("\n\n")
        # Unfolded: a long From: continues on the next line
        froms = [x for x in re.sub(r"\n[ \t]+", " ", head).split("\n")
                 if x.startswith("From:")]
        if [same_ident(x[len("From:"):], who) for x in froms] != [True]:
            bad.append(f"{name}: {froms or 'no From:'}, not From: {who}")
        if p == cover:
            continue
        msg = rest.split("\n---\n")[0].split("\n")
        sobs = [x for x in msg if x.startswith("Signed-off-by:")]
        if sobs != [f"Signed-off-by: {who}"]:
            bad.append(f"{name}: {sobs or 'no Signed-off-by'}, not "
                       f"Signed-off-by: {who}")
        m_lines += [(name, x) for x in text.split("\n")
                    if re.match(r"^\+M:\t", x)]
    if maintainers and [x for _, x in m_lines] != [f"+M:\t{who}"]:
        bad.append(f"the MAINTAINERS M: lines the series adds are "
                   f"{m_lines}, not one '+M:\t{who}'")
    bad += placeholder_addresses(outdir)
    return bad


def dry_run_marks(poster, files):
    """With a placeholder, every file of the series must carry the dry-run
    mark; without, none."""
    bad = []
    for f in files:
        if not os.path.exists(f):
            continue
        with open(f, encoding="utf-8") as fd:
            marked = "DRY RUN, not for posting" in fd.read()
        if marked != bool(poster.placeholder):
            bad.append(f"{os.path.basename(f)}: "
                       f"{'no ' if not marked else ''}DRY RUN mark, with "
                       f"{'a placeholder' if poster.placeholder else 'the'}"
                       f" identity {poster.who}")
    return bad


def identity_checks(tap, timing, vmxnet3=True):
    """TAP lines: the poster's identity rules, the refusal of a
    placeholder, and the patches made with a real identity (for vx3's
    series and, with vmxnet3, the vmxnet3 series)."""
    tap.line(not (bad := resolver_problems()), "identity: VX3_POSTER, else "
             "git config; example.org/.com/.net, .example, .invalid, .test, "
             "vx3-devel and no identity are placeholders", bad)
    tap.line(not (bad := refusal_problems(os.path.abspath(__file__),
                                          OUTDIR)),
             "identity: make series refuses a placeholder without a dry "
             "run", bad)
    os.makedirs(os.path.join(ROOT, "build"), exist_ok=True)
    tmp = tempfile.mkdtemp(prefix="series-identity.",
                           dir=os.path.join(ROOT, "build"))
    try:
        poster = Poster(TEST_POSTER, "test")
        try:
            _, _, patches = make_series(timing, poster, tmp)
            bad = identity_problems(tmp, patches, TEST_POSTER, True)
            bad += dry_run_marks(poster, glob.glob(os.path.join(tmp, "*")))
        except (Fail, vx3series.SeriesError) as e:
            bad = str(e).split("\n")
        tap.line(not bad, f"identity: with {POSTER_VAR}, every patch is "
                 "From: and Signed-off-by: it, the MAINTAINERS M: line is "
                 "it, no placeholder address in the series", bad)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    if vmxnet3:
        sys.path.insert(0, os.path.join(ROOT, "scripts", "vmxnet3-series"))
        import vmxnet3_series
        vmxnet3_series.identity_checks(tap, timing)


class Tap:
    def __init__(self, start):
        self.n = start
        self.failed = 0

    def line(self, ok, desc, diag=()):
        for d in list(diag)[:40]:
            print(f"# {d}")
        if len(diag) > 40:
            print(f"# ... ({len(diag) - 40} more)")
        print(f"{'ok' if ok else 'not ok'} {self.n} - series: {desc}",
              flush=True)
        self.n += 1
        self.failed += not ok


def locked(fn):
    def wrapper(*a, **kw):
        os.makedirs(CACHE, exist_ok=True)
        with open(os.path.join(CACHE, "lock"), "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            return fn(*a, **kw)
    return wrapper


def tap_results(tap, checks, results, logdir, what):
    """One TAP line a check: checks is [(name, description)] or [(name,
    description, skip reason or None)], results {check: [(patch,
    problems)]}."""
    for name, desc, *skip in checks:
        if skip and skip[0]:
            tap.line(True, f"{what}: {desc} # SKIP {skip[0]}")
            continue
        diag = []
        for k, lines in results[name]:
            diag += [f"patch {k}: {x}" for x in lines]
        if diag:
            diag.append(f"logs: {os.path.relpath(logdir, ROOT)}/"
                        f"NN-{name}.log")
        tap.line(not diag, f"{what}: {desc}", diag)


def report_timing(timing):
    for what, secs in timing:
        print(f"# {what}: {secs:.0f} s")


def cmd_make(args):
    # Refused before taking the lock: a check holding it runs this
    try:
        poster = get_poster(args)
    except Fail as e:
        print(f"make series: FAILED: {e}", file=sys.stderr)
        return 1
    return make_locked(poster)


@locked
def make_locked(poster):
    timing = []
    t0 = time.time()
    try:
        ensure_tree(timing)
        series, commits, patches = make_series(timing, poster)
    except (Fail, vx3series.SeriesError) as e:
        print(f"make series: FAILED: {e}", file=sys.stderr)
        return 1
    if poster.placeholder:
        print(textwrap.fill(dry_run_note(poster), 72), file=sys.stderr)
    print(f"{len(patches)} patches and a cover letter in "
          f"{os.path.relpath(OUTDIR, ROOT)}/ (base {BASE_TAG} "
          f"{git('rev-parse', '--short', BASE_TAG).stdout.strip()}, "
          f"applied as {SERIES_TAG} in {TREE}):")
    for line in patch_stats(commits):
        print(line)
    report_timing(timing)
    print(f"# make series took {time.time() - t0:.0f} s")
    return 0


def cmd_check(args):
    try:
        poster = get_poster(args)
    except Fail as e:
        Tap(args.tap_start).line(False, "the poster's identity",
                                 str(e).split("\n"))
        return 1
    return check_locked(args, poster)


@locked
def check_locked(args, poster):
    tap = Tap(args.tap_start)
    timing = []
    t0 = time.time()
    try:
        ensure_tree(timing)
        # The identity checks first: the series of this run is made last,
        # so that the tree's vx3-series tag is its
        identity_checks(tap, timing)
        series, commits, patches = make_series(timing, poster)
    except (Fail, vx3series.SeriesError) as e:
        tap.line(False, "make series: derive, apply with git am, final "
                 "tree equals the repository", str(e).split("\n"))
        for _, desc, _ in checks(args.full):
            tap.line(True, f"per patch: {desc} # SKIP no series")
        return 1
    tap.line(True, f"make series: {len(patches)} patches derived, applied "
             "with git am, final tree equals the repository")
    bad = []
    if len(patches) > MAX_PATCHES:
        bad.append(f"{len(patches)} patches, more than {MAX_PATCHES}")
    for i, p in enumerate(patches, 1):
        with open(p, encoding="utf-8") as f:
            head = f.read()
        want = f"[PATCH net-next {i:0{len(str(len(patches)))}d}/" \
               f"{len(patches)}] eth: vx3: "
        if want not in head.split("\n\n")[0].replace("\n ", " "):
            bad.append(f"{os.path.basename(p)}: subject is not '{want}...'")
    cover = os.path.join(OUTDIR, "0000-cover-letter.patch")
    if not os.path.exists(cover):
        bad.append("no cover letter")
    bad += dry_run_marks(poster, [cover] + patches)
    tap.line(not bad, f"{len(patches)} patches (at most {MAX_PATCHES}), "
             "net-next subjects, cover letter with base-commit"
             f"{', DRY RUN marks' if poster.placeholder else ''}", bad)
    try:
        for arch in arches(args.full):
            ensure_out(arch, timing)
        results, reused = run_checks(commits, patches, timing, args.full)
    except Fail as e:
        for _, desc, _ in checks(args.full):
            tap.line(False, f"per patch: {desc}", str(e).split("\n"))
        return 1
    tap_results(tap, checks(args.full), results, LOGDIR, "per patch")
    report_timing(timing)
    print(f"# {reused} check results reused: they passed before on "
          "identical inputs (VX3_SERIES_RECHECK=1 runs them again)")
    print(f"# series checks took {time.time() - t0:.0f} s")
    return 1 if tap.failed else 0


def cmd_units(args):
    path = vx3series.resolve_path(args.file)
    with open(os.path.join(ROOT, path), encoding="utf-8") as f:
        text = f.read()
    try:
        print("\n".join(vx3series.list_units(path, text)))
    except vx3series.SeriesError as e:
        print(e, file=sys.stderr)
        return 1
    return 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    m = sub.add_parser("make", help="generate and verify the series")
    c = sub.add_parser("check", help="make, then NIPA's checks, as TAP")
    for x in (m, c):
        x.add_argument("--dry-run", action="store_true",
                       help="write the patches even with a placeholder "
                       "identity, marked as not for posting (as "
                       f"{DRY_RUN_VAR}=1)")
    c.add_argument("--tap-start", type=int, default=1)
    c.add_argument("--full", action="store_true",
                   help="build at every patch and on i386 too")
    u = sub.add_parser("units", help="list the units of a driver file")
    u.add_argument("file")
    sub.add_parser("tree", help="print the cached kernel tree's path "
                   "(for scripts/vmxnet3-series/patched.sh)")
    args = ap.parse_args()
    return {"make": cmd_make, "check": cmd_check, "units": cmd_units,
            "tree": lambda a: print(TREE)}[args.cmd](args)


if __name__ == "__main__":
    sys.exit(main())
