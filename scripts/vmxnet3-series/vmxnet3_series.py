#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""The in-tree vmxnet3 patch series: apply it and run NIPA's checks on it.

  vmxnet3_series.py make     apply scripts/vmxnet3-series/0*.patch with
                             git am on vx3-base (Debian's linux-source-7.3)
                             and write build/series-vmxnet3/
  vmxnet3_series.py check    make, then the per-patch checks of
                             scripts/vx3-series/series.py on
                             drivers/net/vmxnet3 (TAP)

The patches are applied in a clone of series.py's kernel tree
($VX3_SERIES_CACHE/vmxnet3, sparse: drivers/net/vmxnet3 only), so the
checked-out state of $VX3_SERIES_CACHE/linux is never changed here; the
x86_64 and i386 build directories, the ccache and the lock are series.py's.
Warnings that vx3-base already has are not held against a patch: the
builds and kernel-doc are compared with those of the base.

The committed patch files carry no identity: each is applied From: the
poster (series.py's VX3_POSTER or git config) with git am --signoff, the
poster committing. A placeholder identity is refused unless --dry-run
(or VX3_SERIES_DRY_RUN=1) asks for patches marked as not for posting.
"""

import argparse
import glob
import hashlib
import os
import re
import shutil
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "scripts", "vx3-series"))
import series  # noqa: E402
from series import Fail, git, log  # noqa: E402

PATCHES = HERE
COVER = os.path.join(HERE, "cover-letter.txt")
WORK = os.path.join(series.CACHE, "vmxnet3")
DRV_DIR = "drivers/net/vmxnet3"
DRV = series.Driver(WORK, DRV_DIR, "VMXNET3", f"{DRV_DIR}/vmxnet3")
OUTDIR = os.path.join(ROOT, "build", "series-vmxnet3")
LOGDIR = os.path.join(ROOT, "build", "series-vmxnet3-check")
SUBJECT = "vmxnet3: "

CHECKS = (
    ("build_x86_64", "x86_64 allmodconfig W=1 C=1 (sparse) build, no "
     "warnings the base does not have"),
    ("build_i386", "i386 allmodconfig W=1 build, no warnings the base "
     "does not have"),
    ("checkpatch", "checkpatch --strict --codespell --max-line-length=80 "
     "(NIPA's ignores) clean"),
    ("kdoc", "kernel-doc -Wall -none on touched files, nothing the base "
     "does not have"),
    ("greps", "no inline in .c, no static non-inline in .h, no "
     "module_param"),
    ("signoff", "Signed-off-by of author and committer"),
)


def patch_files():
    files = sorted(glob.glob(os.path.join(PATCHES, "[0-9][0-9][0-9][0-9]-"
                                          "*.patch")))
    if not files:
        raise Fail(f"no patches in {os.path.relpath(PATCHES, ROOT)}/")
    return files


def identity_lines(path):
    """The From: and Signed-off-by: lines of a committed patch file,
    which must have none: the poster's are added (make())."""
    with open(path, encoding="utf-8") as f:
        text = f.read()
    head, _, rest = text.partition("\n\n")
    msg = rest.split("\n---\n")[0]
    return [x for x in head.split("\n") if x.startswith("From:")] + \
        [x for x in msg.split("\n") if re.match(r"(?i)signed-off-by:", x)]


def with_author(path, who, tmp):
    """A copy of a committed patch file in tmp with From: who."""
    with open(path, encoding="utf-8") as f:
        lines = f.read().split("\n")
    lines.insert(1 if lines[0].startswith("From ") else 0, f"From: {who}")
    out = os.path.join(tmp, os.path.basename(path))
    with open(out, "w", encoding="utf-8") as f:
        f.write("\n".join(lines))
    return out


def ensure_work():
    """A sparse clone of the series tree with drivers/net/vmxnet3 only;
    made again when the tree's base commit changed."""
    base = git("rev-parse", f"{series.BASE_TAG}^{{commit}}").stdout.strip()
    if os.path.isdir(os.path.join(WORK, ".git")):
        p = git("rev-parse", "-q", "--verify",
                f"{series.BASE_TAG}^{{commit}}", cwd=WORK, check=False)
        if p.stdout.strip() == base:
            return
    log(f"cloning {series.TREE} into {WORK} (sparse, {DRV_DIR})")
    shutil.rmtree(WORK, ignore_errors=True)
    git("clone", "-q", "--shared", "--no-checkout", series.TREE, WORK,
        cwd=series.CACHE)
    for k, v in (("gc.auto", "0"), ("maintenance.auto", "false"),
                 ("advice.detachedHead", "false")):
        git("config", k, v, cwd=WORK)
    git("sparse-checkout", "set", "--no-cone", f"/{DRV_DIR}/", cwd=WORK)
    git("checkout", "-q", "-f", "--detach", series.BASE_TAG, cwd=WORK)


def cover_template():
    with open(COVER, encoding="utf-8") as f:
        text = f.read()
    subject, _, body = text.partition("\n")
    if not subject.startswith("subject: "):
        raise Fail(f"{os.path.relpath(COVER, ROOT)}: the first line must "
                   "be 'subject: ...'")
    return subject[len("subject: "):].strip(), body.strip("\n")


def make(timing, poster, outdir=OUTDIR):
    """git am of the patch files on vx3-base, from and signed off by the
    poster, format-patch of the result into outdir. Returns (commits,
    output patches without the cover letter)."""
    t0 = time.time()
    files = patch_files()
    carry = [f"{os.path.basename(f)}: {x}" for f in files
             for x in identity_lines(f)]
    if carry:
        raise Fail("the committed patches must carry no identity (the "
                   "poster's From: and Signed-off-by are added from "
                   f"{series.POSTER_VAR} or git config): remove\n" +
                   "\n".join(carry))
    who = poster.who
    date = git("log", "-1", "--format=%cI", cwd=ROOT).stdout.strip()
    env = series.ident_env(who, date)
    # The committer is the poster, who signs off (git am --signoff); the
    # author is the poster too (From:), the date comes with the patch
    env = {k: v for k, v in env.items() if k.startswith("GIT_COMMITTER")}
    ensure_work()
    git("am", "--abort", cwd=WORK, check=False)
    git("checkout", "-q", "-f", "--detach", series.BASE_TAG, cwd=WORK)
    git("clean", "-q", "-f", "-d", "-x", "--", DRV_DIR, cwd=WORK)
    with tempfile.TemporaryDirectory() as tmp:
        mbox = [with_author(f, who, tmp) for f in files]
        p = git("am", "-q", "--no-3way", "--signoff", *mbox, cwd=WORK,
                env=env, check=False)
    if p.returncode:
        git("am", "--abort", cwd=WORK, check=False)
        raise Fail("git am of the patches on "
                   f"{series.BASE_TAG} failed:\n{(p.stderr or '').strip()}")
    commits = git("rev-list", "--reverse", f"{series.BASE_TAG}..HEAD",
                  cwd=WORK).stdout.split()
    if len(commits) != len(files):
        raise Fail(f"{len(files)} patch files gave {len(commits)} commits")
    changed = git("diff", "--name-only", series.BASE_TAG, "HEAD",
                  cwd=WORK).stdout.split()
    outside = [f for f in changed if not f.startswith(DRV_DIR + "/")]
    if outside:
        raise Fail(f"the series changes files outside {DRV_DIR}: "
                   f"{' '.join(outside)}")

    shutil.rmtree(outdir, ignore_errors=True)
    git("format-patch", "-q", "--cover-letter",
        "--subject-prefix=PATCH net-next", f"--base={series.BASE_TAG}",
        "-o", outdir, f"{series.BASE_TAG}..HEAD", cwd=WORK, env=env)
    out = sorted(glob.glob(os.path.join(outdir, "*.patch")))
    cover = out.pop(0)
    subject, body = cover_template()
    with open(cover, encoding="utf-8") as f:
        text = f.read()
    if "*** SUBJECT HERE ***" not in text or "*** BLURB HERE ***" not in text:
        raise Fail("unexpected cover letter template from git format-patch")
    body = body.replace("{bench}", series.bench_table())
    if poster.placeholder:
        body = series.textwrap.fill(series.dry_run_note(poster), 72) + \
            "\n\n" + body
        for f in out:
            series.mark_dry_run(f, poster)
    text = text.replace("*** SUBJECT HERE ***", subject)
    text = text.replace("*** BLURB HERE ***", body)
    with open(cover, "w", encoding="utf-8") as f:
        f.write(text)
    timing.append(("make series-vmxnet3", time.time() - t0))
    return commits, out


def stats(commits):
    out = []
    for i, c in enumerate(commits, 1):
        st = git("show", "--format=%s", "--shortstat", c,
                 cwd=WORK).stdout.strip()
        subj, _, short = st.partition("\n")
        out.append(f"{i:2}/{len(commits)} {subj}\n       {short.strip()}")
    return out


def tool_key(*parts):
    h = hashlib.sha1()
    for path in (os.path.abspath(__file__), os.path.abspath(series.__file__)):
        with open(path, "rb") as f:
            h.update(f.read())
    h.update("\n".join(str(x) for x in parts).encode())
    return h.hexdigest()


def build_key(arch, commit):
    parts = [arch, git("rev-parse", f"{commit}:{DRV_DIR}",
                       cwd=WORK).stdout.strip(),
             series.read_stamp(series.out_dir(arch) + ".stamp") or "-",
             series.CC, series.tool_version("gcc --version")]
    if arch == "x86_64":
        parts.append(series.tool_version("sparse --version"))
    return tool_key(*parts)


def base_results(timing):
    """The warnings of the base: the two builds and kernel-doc of every
    .c/.h of the driver, cached per key in $VX3_SERIES_CACHE/results/."""
    t0 = time.time()
    resdir = os.path.join(series.CACHE, "results")
    os.makedirs(resdir, exist_ok=True)
    git("checkout", "-q", "-f", "--detach", series.BASE_TAG, cwd=WORK)
    base = {}
    for arch in series.ARCHES:
        key = build_key(arch, series.BASE_TAG)
        cached = os.path.join(resdir, f"vmxnet3-base-{key}")
        logf = os.path.join(LOGDIR, f"00-base-build_{arch}.log")
        if os.path.exists(cached):
            shutil.copy(cached, logf)
        else:
            warnings, bad = series.build_warnings(arch, arch == "x86_64",
                                                  logf, DRV)
            if bad:
                raise Fail(f"the base does not build on {arch}: "
                           f"{'; '.join(bad)} (see {logf})")
            shutil.copy(logf, cached)
        with open(logf, encoding="utf-8", errors="replace") as f:
            base[f"build_{arch}"] = [
                x for x in f.read().split("\n")
                if re.search(r"warning|error", x, re.I) and
                not series.BUILD_NOISE.search(x)]
    files = sorted(f"{DRV_DIR}/{f}" for f in os.listdir(
        os.path.join(WORK, DRV_DIR)) if f.endswith((".c", ".h")))
    base["kdoc"], _ = series.kdoc_output(
        files, os.path.join(LOGDIR, "00-base-kdoc.log"), WORK)
    timing.append(("base builds and kernel-doc", time.time() - t0))
    return base


def run_checks(commits, patches, timing):
    os.makedirs(LOGDIR, exist_ok=True)
    for f in glob.glob(os.path.join(LOGDIR, "*.log")):
        os.unlink(f)
    base = base_results(timing)
    resdir = os.path.join(series.CACHE, "results")
    recheck = os.environ.get("VX3_SERIES_RECHECK") == "1"
    results = {c: [] for c, _ in CHECKS}
    spent = {c: 0.0 for c, _ in CHECKS}
    reused = 0
    for k, (commit, patch) in enumerate(zip(commits, patches), 1):
        git("checkout", "-q", "-f", "--detach", commit, cwd=WORK)
        for name, _ in CHECKS:
            t0 = time.time()
            logf = os.path.join(LOGDIR, f"{k:02d}-{name}.log")
            if name.startswith("build_"):
                arch = name[len("build_"):]
                passed = os.path.join(resdir, "vmxnet3-" +
                                      build_key(arch, commit))
                if os.path.exists(passed) and not recheck:
                    shutil.copy(passed, logf)
                    with open(logf, "a", encoding="utf-8") as f:
                        f.write("\n# reused: passed before with identical "
                                "inputs\n")
                    reused += 1
                    bad = []
                else:
                    bad = series.build_driver(arch, arch == "x86_64", logf,
                                              DRV, base[name])
                    if not bad:
                        shutil.copy(logf, passed)
            elif name == "checkpatch":
                bad = series.check_checkpatch(patch, logf)
            elif name == "kdoc":
                bad = series.check_kdoc(commit, logf, WORK, base["kdoc"])
            elif name == "greps":
                bad = series.check_nipa_greps(commit, WORK)
            else:
                bad = series.check_signoff(commit, WORK)
            spent[name] += time.time() - t0
            if bad:
                results[name].append((k, bad))
        log(f"vmxnet3 patch {k}/{len(commits)} checked")
    git("clean", "-q", "-f", "-d", "-x", "--", DRV_DIR, cwd=WORK)
    for name, _ in CHECKS:
        timing.append((f"check {name}", spent[name]))
    return results, reused


def identity_checks(tap, timing):
    """TAP lines: make refuses a placeholder identity without a dry run;
    the committed patches carry no identity; made with a real one, every
    patch is from and signed off by it and no placeholder address is in
    the output."""
    bad = series.refusal_problems(os.path.abspath(__file__), OUTDIR)
    tap.line(not bad, "identity: make series-vmxnet3 refuses a placeholder "
             "without a dry run", bad)
    bad = [f"{os.path.basename(f)}: {x}" for f in patch_files()
           for x in identity_lines(f)]
    tap.line(not bad, "identity: the committed vmxnet3 patches carry no "
             "From: or Signed-off-by", bad)
    os.makedirs(os.path.join(ROOT, "build"), exist_ok=True)
    tmp = tempfile.mkdtemp(prefix="series-vmxnet3-identity.",
                           dir=os.path.join(ROOT, "build"))
    try:
        poster = series.Poster(series.TEST_POSTER, "test")
        try:
            _, patches = make(timing, poster, tmp)
            bad = series.identity_problems(tmp, patches, series.TEST_POSTER)
            bad += series.dry_run_marks(poster,
                                        glob.glob(os.path.join(tmp, "*")))
        except Fail as e:
            bad = str(e).split("\n")
        tap.line(not bad, f"identity: with {series.POSTER_VAR}, every "
                 "vmxnet3 patch is From: and Signed-off-by: it, no "
                 "placeholder address in the series", bad)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def series_line(tap, commits, patches, poster):
    bad = []
    n = len(patches)
    if n > series.MAX_PATCHES:
        bad.append(f"{n} patches, more than {series.MAX_PATCHES}")
    for i, p in enumerate(patches, 1):
        with open(p, encoding="utf-8") as f:
            head = f.read().split("\n\n")[0].replace("\n ", " ")
        want = f"[PATCH net-next {i:0{len(str(n))}d}/{n}] {SUBJECT}"
        if want not in head:
            bad.append(f"{os.path.basename(p)}: subject is not '{want}...'")
    cover = os.path.join(OUTDIR, "0000-cover-letter.patch")
    if not os.path.exists(cover):
        bad.append("no cover letter")
    else:
        with open(cover, encoding="utf-8") as f:
            text = f.read()
        if f"[PATCH net-next 0/{n}]" not in text:
            bad.append("the cover letter is not [PATCH net-next 0/N]")
        if "base-commit:" not in text:
            bad.append("the cover letter has no base-commit")
        if "{bench}" in text:
            bad.append("the cover letter still has {bench}")
    bad += series.dry_run_marks(poster, [cover] + patches)
    tap.line(not bad, f"vmxnet3 {n} patches (at most {series.MAX_PATCHES}"
             "), net-next subjects, cover letter with base-commit and bench "
             "table", bad)


def cmd_make(args):
    # Refused before taking the lock: a check holding it runs this
    try:
        poster = series.get_poster(args)
    except Fail as e:
        print(f"make series-vmxnet3: FAILED: {e}", file=sys.stderr)
        return 1
    return make_locked(poster)


@series.locked
def make_locked(poster):
    timing = []
    try:
        series.ensure_tree(timing)
        commits, patches = make(timing, poster)
    except Fail as e:
        print(f"make series-vmxnet3: FAILED: {e}", file=sys.stderr)
        return 1
    if poster.placeholder:
        print(series.textwrap.fill(series.dry_run_note(poster), 72),
              file=sys.stderr)
    print(f"{len(patches)} patches and a cover letter in "
          f"{os.path.relpath(OUTDIR, ROOT)}/ (base {series.BASE_TAG}, "
          f"applied in {WORK}):")
    print("\n".join(stats(commits)))
    series.report_timing(timing)
    return 0


def cmd_check(args):
    try:
        poster = series.get_poster(args)
    except Fail as e:
        series.Tap(args.tap_start).line(False, "the poster's identity",
                                        str(e).split("\n"))
        return 1
    return check_locked(args, poster)


@series.locked
def check_locked(args, poster):
    tap = series.Tap(args.tap_start)
    timing = []
    t0 = time.time()
    try:
        series.ensure_tree(timing)
        identity_checks(tap, timing)
        commits, patches = make(timing, poster)
    except Fail as e:
        tap.line(False, "vmxnet3 patches: apply with git am on "
                 f"{series.BASE_TAG}, format-patch", str(e).split("\n"))
        for _, desc in CHECKS:
            tap.line(True, f"vmxnet3, every patch: {desc} # SKIP no series")
        return 1
    tap.line(True, f"vmxnet3 patches: {len(patches)} applied with git am on "
             f"{series.BASE_TAG}, written to "
             f"{os.path.relpath(OUTDIR, ROOT)}/")
    for x in stats(commits):
        for y in x.split("\n"):
            print(f"# {y.strip()}")
    series_line(tap, commits, patches, poster)
    try:
        for arch in series.ARCHES:
            series.ensure_out(arch, timing)
        results, reused = run_checks(commits, patches, timing)
    except Fail as e:
        for _, desc in CHECKS:
            tap.line(False, f"vmxnet3, every patch: {desc}",
                     str(e).split("\n"))
        return 1
    series.tap_results(tap, CHECKS, results, LOGDIR,
                       "vmxnet3, every patch")
    series.report_timing(timing)
    print(f"# {reused} build results reused: they passed before on "
          "identical inputs (VX3_SERIES_RECHECK=1 runs them again)")
    print(f"# vmxnet3 series checks took {time.time() - t0:.0f} s")
    return 1 if tap.failed else 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    m = sub.add_parser("make", help="apply the patches, write "
                       "build/series-vmxnet3/")
    c = sub.add_parser("check", help="make, then NIPA's checks, as TAP")
    for x in (m, c):
        x.add_argument("--dry-run", action="store_true",
                       help="write the patches even with a placeholder "
                       "identity, marked as not for posting (as "
                       f"{series.DRY_RUN_VAR}=1)")
    c.add_argument("--tap-start", type=int, default=1)
    args = ap.parse_args()
    return {"make": cmd_make, "check": cmd_check}[args.cmd](args)


if __name__ == "__main__":
    sys.exit(main())
