#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""The in-tree vmxnet3 patch series: apply them and run NIPA's checks.

There are two series, as netdev takes them: the fixes for net
(scripts/vmxnet3-series/net/, with Fixes: tags) and the improvements for
net-next (scripts/vmxnet3-series/net-next/), each with its cover letter.
Each applies on its own to the vmxnet3 of vx3-base (Debian's
linux-source-7.3), and net-next also on top of net (the tree net-next
becomes when net is merged into it: what make vmxnet3-patched builds).

  vmxnet3_series.py make     apply each series with git am on vx3-base
                             and write build/series-vmxnet3/{net,net-next}/
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

# (name, the tree it is for): the subject prefix is "PATCH <tree>"
SERIES = (("net", "net"), ("net-next", "net-next"))
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
     "(NIPA's ignores, and UNKNOWN_COMMIT_ID: the tree has no history to "
     "look Fixes: up in) clean"),
    ("kdoc", "kernel-doc -Wall -none on touched files, nothing the base "
     "does not have"),
    ("greps", "no inline in .c, no static non-inline in .h, no "
     "module_param"),
    ("signoff", "Signed-off-by of author and committer"),
)


def patch_files(name=None):
    """The patch files of series name, or of all series in order."""
    if name is None:
        return [f for n, _ in SERIES for f in patch_files(n)]
    d = os.path.join(HERE, name)
    files = sorted(glob.glob(os.path.join(d, "[0-9][0-9][0-9][0-9]-"
                                          "*.patch")))
    if not files:
        raise Fail(f"no patches in {os.path.relpath(d, ROOT)}/")
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


def cover_template(name):
    cover = os.path.join(HERE, name, "cover-letter.txt")
    with open(cover, encoding="utf-8") as f:
        text = f.read()
    subject, _, body = text.partition("\n")
    if not subject.startswith("subject: "):
        raise Fail(f"{os.path.relpath(cover, ROOT)}: the first line must "
                   "be 'subject: ...'")
    if "{" in body:
        raise Fail(f"{os.path.relpath(cover, ROOT)}: a placeholder in "
                   "braces is left")
    return subject[len("subject: "):].strip(), body.strip("\n")


def git_am(files, who, env, onto):
    """git am of files on onto (detached) in WORK; their commits."""
    git("am", "--abort", cwd=WORK, check=False)
    git("checkout", "-q", "-f", "--detach", onto, cwd=WORK)
    git("clean", "-q", "-f", "-d", "-x", "--", DRV_DIR, cwd=WORK)
    with tempfile.TemporaryDirectory() as tmp:
        mbox = [with_author(f, who, tmp) for f in files]
        p = git("am", "-q", "--no-3way", "--signoff", *mbox, cwd=WORK,
                env=env, check=False)
    if p.returncode:
        git("am", "--abort", cwd=WORK, check=False)
        raise Fail(f"git am of the patches on {onto} failed:\n"
                   f"{(p.stderr or '').strip()}")
    commits = git("rev-list", "--reverse", f"{onto}..HEAD",
                  cwd=WORK).stdout.split()
    if len(commits) != len(files):
        raise Fail(f"{len(files)} patch files gave {len(commits)} commits")
    changed = git("diff", "--name-only", onto, "HEAD",
                  cwd=WORK).stdout.split()
    outside = [f for f in changed if not f.startswith(DRV_DIR + "/")]
    if outside:
        raise Fail(f"the series changes files outside {DRV_DIR}: "
                   f"{' '.join(outside)}")
    return commits


def make(timing, poster, outdir=OUTDIR):
    """git am of each series on vx3-base, from and signed off by the
    poster, format-patch of the result into outdir/<series>/; net-next
    must also apply on top of net. Returns {series: (commits, output
    patches without the cover letter)}."""
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
    shutil.rmtree(outdir, ignore_errors=True)
    result = {}
    for name, tree in SERIES:
        commits = git_am(patch_files(name), who, env, series.BASE_TAG)
        out_s = os.path.join(outdir, name)
        git("format-patch", "-q", "--cover-letter",
            f"--subject-prefix=PATCH {tree}", f"--base={series.BASE_TAG}",
            "-o", out_s, f"{series.BASE_TAG}..HEAD", cwd=WORK, env=env)
        out = sorted(glob.glob(os.path.join(out_s, "*.patch")))
        cover = out.pop(0)
        subject, body = cover_template(name)
        with open(cover, encoding="utf-8") as f:
            text = f.read()
        if "*** SUBJECT HERE ***" not in text or \
                "*** BLURB HERE ***" not in text:
            raise Fail("unexpected cover letter template from git "
                       "format-patch")
        if poster.placeholder:
            body = series.textwrap.fill(series.dry_run_note(poster), 72) + \
                "\n\n" + body
            for f in out:
                series.mark_dry_run(f, poster)
        text = text.replace("*** SUBJECT HERE ***", subject)
        text = text.replace("*** BLURB HERE ***", body)
        with open(cover, "w", encoding="utf-8") as f:
            f.write(text)
        result[name] = (commits, out)
    # net-next on top of net: the tree once net is merged into net-next
    git_am(patch_files("net-next"), who, env, result["net"][0][-1])
    timing.append(("make series-vmxnet3", time.time() - t0))
    return result


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


def run_checks(name, commits, patches, base, timing):
    """The per-patch checks of series name; logs in LOGDIR/<name>/."""
    logdir = os.path.join(LOGDIR, name)
    os.makedirs(logdir, exist_ok=True)
    for f in glob.glob(os.path.join(logdir, "*.log")):
        os.unlink(f)
    resdir = os.path.join(series.CACHE, "results")
    recheck = os.environ.get("VX3_SERIES_RECHECK") == "1"
    results = {c: [] for c, _ in CHECKS}
    spent = {c: 0.0 for c, _ in CHECKS}
    reused = 0
    for k, (commit, patch) in enumerate(zip(commits, patches), 1):
        git("checkout", "-q", "-f", "--detach", commit, cwd=WORK)
        for check, _ in CHECKS:
            t0 = time.time()
            logf = os.path.join(logdir, f"{k:02d}-{check}.log")
            if check.startswith("build_"):
                arch = check[len("build_"):]
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
                                              DRV, base[check])
                    if not bad:
                        shutil.copy(logf, passed)
            elif check == "checkpatch":
                # vx3-base is one commit: checkpatch cannot look up the
                # commits Fixes: names
                bad = series.check_checkpatch(patch, logf,
                                              ("UNKNOWN_COMMIT_ID",))
            elif check == "kdoc":
                bad = series.check_kdoc(commit, logf, WORK, base["kdoc"])
            elif check == "greps":
                bad = series.check_nipa_greps(commit, WORK)
            else:
                bad = series.check_signoff(commit, WORK)
            spent[check] += time.time() - t0
            if bad:
                results[check].append((k, bad))
        log(f"vmxnet3 {name} patch {k}/{len(commits)} checked")
    git("clean", "-q", "-f", "-d", "-x", "--", DRV_DIR, cwd=WORK)
    for check, _ in CHECKS:
        timing.append((f"{name}: check {check}", spent[check]))
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
            bad = []
            for name, (_, patches) in make(timing, poster, tmp).items():
                bad += series.identity_problems(os.path.join(tmp, name),
                                                patches, series.TEST_POSTER)
                bad += series.dry_run_marks(poster, glob.glob(
                    os.path.join(tmp, name, "*")))
        except Fail as e:
            bad = str(e).split("\n")
        tap.line(not bad, f"identity: with {series.POSTER_VAR}, every "
                 "vmxnet3 patch is From: and Signed-off-by: it, no "
                 "placeholder address in the series", bad)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def series_line(tap, name, tree, patches, poster):
    bad = []
    n = len(patches)
    if n > series.MAX_PATCHES:
        bad.append(f"{n} patches, more than {series.MAX_PATCHES}")
    for i, p in enumerate(patches, 1):
        with open(p, encoding="utf-8") as f:
            text = f.read()
        head = text.split("\n\n")[0].replace("\n ", " ")
        want = f"[PATCH {tree} {i:0{len(str(n))}d}/{n}] {SUBJECT}"
        if want not in head:
            bad.append(f"{os.path.basename(p)}: subject is not '{want}...'")
        msg = text.split("\n---\n")[0]
        fixes = re.findall(r"(?m)^Fixes: (.*)$", msg)
        if tree == "net" and not fixes:
            bad.append(f"{os.path.basename(p)}: a fix for net without a "
                       "Fixes: tag")
        for x in fixes:
            if not re.fullmatch(r'[0-9a-f]{12} \("[^"]+"\)', x):
                bad.append(f"{os.path.basename(p)}: 'Fixes: {x}' is not "
                           "'Fixes: <12 hex digits> (\"subject\")'")
    cover = os.path.join(OUTDIR, name, "0000-cover-letter.patch")
    if not os.path.exists(cover):
        bad.append("no cover letter")
    else:
        with open(cover, encoding="utf-8") as f:
            text = f.read()
        if f"[PATCH {tree} 0/{n}]" not in text:
            bad.append(f"the cover letter is not [PATCH {tree} 0/N]")
        if "base-commit:" not in text:
            bad.append("the cover letter has no base-commit")
    bad += series.dry_run_marks(poster, [cover] + patches)
    tap.line(not bad, f"vmxnet3 {name}: {n} patches (at most "
             f"{series.MAX_PATCHES}), [PATCH {tree}] subjects, "
             + ("Fixes: tags, " if tree == "net" else "") +
             "cover letter with base-commit", bad)


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
        made = make(timing, poster)
    except Fail as e:
        print(f"make series-vmxnet3: FAILED: {e}", file=sys.stderr)
        return 1
    if poster.placeholder:
        print(series.textwrap.fill(series.dry_run_note(poster), 72),
              file=sys.stderr)
    for name, (commits, patches) in made.items():
        print(f"{name}: {len(patches)} patches and a cover letter in "
              f"{os.path.relpath(os.path.join(OUTDIR, name), ROOT)}/ "
              f"(base {series.BASE_TAG}, applied in {WORK}):")
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
        made = make(timing, poster)
    except Fail as e:
        tap.line(False, "vmxnet3 patches: each series applies with git am "
                 f"on {series.BASE_TAG}, net-next on net too, format-patch",
                 str(e).split("\n"))
        for name, _ in SERIES:
            for _, desc in CHECKS:
                tap.line(True, f"vmxnet3 {name}, every patch: {desc} "
                         "# SKIP no series")
        return 1
    tap.line(True, "vmxnet3 patches: " + ", ".join(
        f"{name} {len(p)}" for name, (_, p) in made.items()) +
        f" applied with git am on {series.BASE_TAG}, net-next on net too, "
        f"written to {os.path.relpath(OUTDIR, ROOT)}/")
    for name, tree in SERIES:
        commits, patches = made[name]
        print(f"# {name}:")
        for x in stats(commits):
            for y in x.split("\n"):
                print(f"# {y.strip()}")
        series_line(tap, name, tree, patches, poster)
    reused = 0
    try:
        for arch in series.ARCHES:
            series.ensure_out(arch, timing)
        os.makedirs(LOGDIR, exist_ok=True)
        for f in glob.glob(os.path.join(LOGDIR, "*.log")):
            os.unlink(f)
        base = base_results(timing)
        results = {}
        for name, _ in SERIES:
            results[name], n = run_checks(name, *made[name], base, timing)
            reused += n
    except Fail as e:
        for name, _ in SERIES:
            for _, desc in CHECKS:
                tap.line(False, f"vmxnet3 {name}, every patch: {desc}",
                         str(e).split("\n"))
        return 1
    for name, _ in SERIES:
        series.tap_results(tap, CHECKS, results[name],
                           os.path.join(LOGDIR, name),
                           f"vmxnet3 {name}, every patch")
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
