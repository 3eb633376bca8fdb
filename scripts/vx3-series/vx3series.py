# SPDX-License-Identifier: GPL-2.0
"""Derive the vx3 patch series from the driver files and series.txt.

series.txt assigns the driver's files, and the top-level units of its C
files (functions, structs, macros, prototypes, ...), to patches, and says
which struct members, lines or small pieces of text a later patch adds.
The version of a file at patch k is computed from the final file: units,
members and lines that belong to later patches are left out, and text that
a later patch changes is changed back. Nothing in the driver code marks
the split. Whenever the description no longer matches the code (a named
unit, member or text is gone or ambiguous), derivation stops with an
error that says which directive failed.

See README in this directory for the format of series.txt.
"""

import ast
import fnmatch
import os
import re
import shlex

DRIVER_DIR = "drivers/net/ethernet/vmware/vx3"

# Files of the repository that the series carries (paths as in a kernel
# tree). MAINTAINERS holds only vx3's entry; the series inserts it into the
# kernel's MAINTAINERS.
SERIES_ROOTS = ("drivers/net/ethernet/vmware", "Documentation", "MAINTAINERS")


class SeriesError(Exception):
    """The description and the code disagree, or the description is bad."""


# ---------------------------------------------------------------------------
# C files as a sequence of top-level units


class Unit:
    """A top-level piece of a C file with the comment lines above it."""

    def __init__(self, name, lines, blank_before, skeleton=False):
        self.name = name
        self.lines = lines
        self.blank_before = blank_before
        self.skeleton = skeleton

    def __repr__(self):
        return f"Unit({self.name!r}, {len(self.lines)} lines)"


def _code_of(line, in_comment, keep_strings=False):
    """Return the code of a line without comments (and without string
    contents unless keep_strings), and whether a block comment is still
    open at its end."""
    out = []
    i, n = 0, len(line)
    while i < n:
        if in_comment:
            j = line.find("*/", i)
            if j < 0:
                return "".join(out), True
            i = j + 2
            in_comment = False
            out.append(" ")
        elif line.startswith("/*", i):
            in_comment = True
            i += 2
        elif line.startswith("//", i):
            break
        elif line[i] in "\"'":
            q = line[i]
            j = i + 1
            while j < n and line[j] != q:
                j += 2 if line[j] == "\\" else 1
            out.append(line[i:j + 1] if keep_strings else q + q)
            i = j + 1
        else:
            out.append(line[i])
            i += 1
    return "".join(out), in_comment


_IDENT = re.compile(r"[A-Za-z_]\w*")


def _unit_name(code, path, lineno):
    """Name a unit from its code (comments removed, lines joined)."""
    text = " ".join(code.split())
    if text.startswith("#"):
        m = re.match(r"#\s*include\s*([<\"][^>\"]+[>\"])", text)
        if m:
            return m.group(1)
        m = re.match(r"#\s*define\s+(\w+)", text)
        if m:
            return m.group(1)
        return text
    m = re.match(r"(?:typedef\s+)?(struct|union|enum)\s+(\w+)\s*\{", text)
    if m:
        return f"{m.group(1)} {m.group(2)}"
    # Position of the first '(', '=' and '{' outside brackets
    first = {}
    depth = 0
    for i, c in enumerate(text):
        if c in "([" and depth == 0 and c == "(":
            first.setdefault("(", i)
        if c in "=" and depth == 0:
            first.setdefault("=", i)
        if c == "{" and depth == 0:
            first.setdefault("{", i)
        if c in "([{":
            depth += 1
        elif c in ")]}":
            depth -= 1
    eq = first.get("=", len(text))
    par = first.get("(", len(text))
    if eq < par:
        idents = _IDENT.findall(re.sub(r"\[[^\]]*\]", "", text[:eq]))
        if idents:
            return idents[-1]
    if par < len(text):
        head = text[:par].rstrip()
        idents = _IDENT.findall(head)
        if len(idents) == 1 and head == idents[0]:
            # A macro invocation such as MODULE_LICENSE("GPL")
            return text.rstrip(";").rstrip()
        if idents:
            return idents[-1] + "()"
    idents = _IDENT.findall(text)
    if idents:
        return idents[-1]
    raise SeriesError(f"{path}:{lineno}: cannot name this top-level code")


def parse_c(path, text):
    """Split a C source or header into units. Comment lines directly above
    a unit belong to it; a comment followed by a blank line stands alone.
    The SPDX line, the file's opening comment and include guards are
    skeleton units, present whenever the file is."""
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    units = []
    cur = []
    cur_code = []
    start = 0
    blank = False
    in_comment = False
    depth = 0
    has_code = False
    i = 0

    def finish(name_from_code=True):
        nonlocal cur, cur_code, blank, has_code
        code = " ".join(cur_code)
        if name_from_code:
            name = _unit_name(code, path, start + 1)
        else:
            first = " ".join(cur[0].split())
            name = first[:60]
        units.append(Unit(name, cur, blank))
        cur, cur_code, blank, has_code = [], [], False, False

    while i < len(lines):
        line = lines[i]
        if not cur and not line.strip():
            blank = True
            i += 1
            continue
        if not cur:
            start = i
        code, in_comment_after = _code_of(line, in_comment)
        if not has_code and not code.strip():
            # Comment-only line before any code of the unit
            cur.append(line)
            in_comment = in_comment_after
            i += 1
            if not in_comment:
                nxt = lines[i] if i < len(lines) else ""
                if not nxt.strip():
                    finish(name_from_code=False)
            continue
        if not has_code and code.lstrip().startswith("#"):
            cur.append(line)
            cur_code.append(_code_of(line, in_comment, True)[0])
            while line.endswith("\\") and i + 1 < len(lines):
                i += 1
                line = lines[i]
                cur.append(line)
                cur_code.append(_code_of(line, in_comment_after, True)[0])
                _, in_comment_after = _code_of(line, in_comment_after)
            in_comment = in_comment_after
            has_code = True
            i += 1
            finish()
            continue
        has_code = True
        cur.append(line)
        cur_code.append(_code_of(line, in_comment, True)[0])
        in_comment = in_comment_after
        depth += code.count("{") + code.count("(") - code.count("}") - \
            code.count(")")
        i += 1
        stripped = code.rstrip()
        if depth == 0 and (stripped.endswith(";") or stripped.endswith("}")):
            finish()
    if cur:
        raise SeriesError(f"{path}:{start + 1}: unterminated top-level code")

    # Skeleton: SPDX line and opening comments, include guard
    code_units = [u for u in units
                  if any(_code_of(x, False)[0].strip() for x in u.lines)]
    for u in units:
        if code_units and u is code_units[0]:
            break
        u.skeleton = True
    if units and "SPDX-License-Identifier" in units[0].lines[0]:
        units[0].skeleton = True
    if len(code_units) >= 3 and code_units[0].name.startswith("#ifndef "):
        guard = code_units[0].name.split()[1]
        if code_units[1].name == guard and \
                code_units[-1].name.startswith("#endif"):
            for u in (code_units[0], code_units[1], code_units[-1]):
                u.skeleton = True
    seen = {}
    for u in units:
        if u.skeleton:
            continue
        if u.name in seen:
            raise SeriesError(f"{path}: two top-level units named "
                              f"{u.name!r}; the series cannot tell them "
                              "apart")
        seen[u.name] = u
    return units


def parse_file(path, text):
    """Units of a file: C files are split, others are one unit '-'."""
    if path.endswith((".c", ".h")):
        return parse_c(path, text)
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return [Unit("-", lines, False)]


# ---------------------------------------------------------------------------
# series.txt


class Directive:
    def __init__(self, kind, path, lineno, unit=None, names=None, first=None,
                 last=None, old=None, new=None):
        self.kind = kind
        self.path = path
        self.lineno = lineno
        self.unit = unit
        self.names = names or []
        self.first = first
        self.last = last
        self.old = old
        self.new = new
        self.patch = None

    def where(self):
        return f"series.txt:{self.lineno}"


class Patch:
    def __init__(self, number, lineno):
        self.number = number
        self.lineno = lineno
        self.subject = None
        self.body = []
        self.directives = []


class Spec:
    def __init__(self):
        self.patches = []
        self.cover_subject = None
        self.cover_body = []


def resolve_path(p):
    """Bare file names are files of the driver directory."""
    return p if "/" in p or p == "MAINTAINERS" else f"{DRIVER_DIR}/{p}"


def _split_target(rest, lineno, need_unit):
    """Parse 'FILE [UNIT]: ARGS' into (path, unit, args)."""
    head, sep, args = _split_outside_quotes(rest, ":")
    words = shlex.split(head) if sep else []
    if need_unit and len(words) != 2:
        raise SeriesError(f"series.txt:{lineno}: expected 'FILE UNIT: ...'"
                          " (quote a unit name that has spaces)")
    if not need_unit and len(words) != 1:
        raise SeriesError(f"series.txt:{lineno}: expected 'FILE: ...'")
    unit = words[1] if need_unit else None
    return resolve_path(words[0]), unit, args.strip()


def _split_outside_quotes(s, sep):
    q = None
    i = 0
    while i < len(s):
        c = s[i]
        if q:
            if c == "\\":
                i += 1
            elif c == q:
                q = None
        elif c in "\"'":
            q = c
        elif c == sep:
            return s[:i], sep, s[i + 1:]
        i += 1
    return s, "", ""


def _literals(s, lineno):
    """Parse Python string literals separated by '..' or '->'; return the
    strings and the separators."""
    parts = []
    seps = []
    rest = s.strip()
    lit = re.compile(r"""("(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*')\s*""")
    while rest:
        m = lit.match(rest)
        if not m:
            raise SeriesError(f"series.txt:{lineno}: expected a quoted "
                              f"string at {rest[:30]!r}")
        parts.append(ast.literal_eval(m.group(1)))
        rest = rest[m.end():]
        if not rest:
            break
        m = re.match(r"(\.\.|->)\s*", rest)
        if not m:
            raise SeriesError(f"series.txt:{lineno}: expected '..' or '->'"
                              f" at {rest[:30]!r}")
        seps.append(m.group(1))
        rest = rest[m.end():]
    return parts, seps


def _trim(lines):
    while lines and not lines[-1].strip():
        lines.pop()
    while lines and not lines[0].strip():
        lines.pop(0)
    return lines


def parse_spec(text):
    """Parse series.txt: a [cover] section and [patch] sections, each with
    'subject:', 'body:' (free text) and, for patches, 'content:' (one
    directive per line, indented by two spaces; deeper indented lines
    continue a directive)."""
    spec = Spec()
    section = None
    part = None
    for lineno, line in enumerate(text.split("\n"), 1):
        stripped = line.strip()
        if re.fullmatch(r"\[(cover|patch)\]", stripped):
            if stripped == "[patch]":
                section = Patch(len(spec.patches) + 1, lineno)
                spec.patches.append(section)
            else:
                section = "cover"
            part = "head"
            continue
        if part == "body" and not line.startswith("content:"):
            (spec.cover_body if section == "cover" else
             section.body).append(line.rstrip())
            continue
        if not stripped or line.startswith("#") or \
                (part == "content" and stripped.startswith("#")):
            continue
        if section is None:
            raise SeriesError(f"series.txt:{lineno}: text outside a "
                              "section")
        if part == "content":
            if re.match(r"  \S", line):
                section.directives.append([lineno, stripped, []])
            elif line.startswith("    |") and section.directives:
                section.directives[-1][2].append(line[len("    |"):])
            elif line.startswith("    ") and section.directives:
                section.directives[-1][1] += " " + stripped
            else:
                raise SeriesError(f"series.txt:{lineno}: directives are "
                                  "indented by two spaces")
            continue
        if line.startswith("subject:"):
            subj = line[len("subject:"):].strip()
            if section == "cover":
                spec.cover_subject = subj
            else:
                section.subject = subj
        elif line.startswith("body:"):
            part = "body"
        elif line.startswith("content:") and section != "cover":
            part = "content"
        else:
            raise SeriesError(f"series.txt:{lineno}: unexpected line")

    for p in spec.patches:
        p.directives = [_parse_directive(v, n, h)
                        for n, v, h in p.directives]
        for d in p.directives:
            d.patch = p.number
        _trim(p.body)
        if not p.subject or not p.body or not p.directives:
            raise SeriesError(f"series.txt:{p.lineno}: a patch needs "
                              "subject, body and content")
    _trim(spec.cover_body)
    if not spec.cover_subject or not spec.cover_body:
        raise SeriesError("series.txt: no [cover] section with subject "
                          "and body")
    return spec


def _parse_directive(val, lineno, heredoc):
    kw, _, rest = val.partition(" ")
    if heredoc and kw != "change":
        raise SeriesError(f"series.txt:{lineno}: only 'change' takes "
                          "'|' text lines")
    if kw == "add":
        paths = [resolve_path(p) for p in shlex.split(rest)]
        if not paths:
            raise SeriesError(f"series.txt:{lineno}: 'add' needs files")
        return Directive("add", None, lineno, names=paths)
    if kw == "units":
        path, _, args = _split_target(rest, lineno, False)
        names = shlex.split(args)
        if not names:
            raise SeriesError(f"series.txt:{lineno}: 'units' needs names")
        return Directive("units", path, lineno, names=names)
    if kw == "members":
        path, unit, args = _split_target(rest, lineno, True)
        names = shlex.split(args)
        if not names:
            raise SeriesError(f"series.txt:{lineno}: 'members' needs names")
        return Directive("members", path, lineno, unit=unit, names=names)
    if kw == "lines":
        path, unit, args = _split_target(rest, lineno, True)
        parts, seps = _literals(args, lineno)
        if not (len(parts) == 1 or (len(parts) == 2 and seps == [".."])):
            raise SeriesError(f"series.txt:{lineno}: expected \"FIRST\" "
                              "[.. \"LAST\"]")
        return Directive("lines", path, lineno, unit=unit, first=parts[0],
                         last=parts[1] if len(parts) == 2 else None)
    if kw == "change":
        path, unit, args = _split_target(rest, lineno, True)
        before, arrow, after = args.partition("->")
        before = before.strip()
        if not arrow:
            raise SeriesError(f"series.txt:{lineno}: expected BEFORE -> "
                              "AFTER")
        if before == "<<":
            if not heredoc:
                raise SeriesError(f"series.txt:{lineno}: '<<' needs text "
                                  "lines starting with '    |'")
            old = "\n".join(heredoc)
        else:
            parts, seps = _literals(before, lineno)
            if len(parts) != 1:
                raise SeriesError(f"series.txt:{lineno}: BEFORE is one "
                                  "quoted string or <<")
            old = parts[0]
        d = Directive("change", path, lineno, unit=unit, old=old)
        if after.strip() == "*":
            d.first = d.last = None
        else:
            parts, seps = _literals(after, lineno)
            if len(parts) == 1:
                d.new = parts[0]
            elif len(parts) == 2 and seps == [".."]:
                d.first, d.last = parts
            else:
                raise SeriesError(f"series.txt:{lineno}: AFTER is a quoted "
                                  "string, \"FIRST\" .. \"LAST\" or *")
        return d
    raise SeriesError(f"series.txt:{lineno}: unknown directive {kw!r}")


# ---------------------------------------------------------------------------
# Deriving the files at each patch


def _is_glob(name):
    return any(c in name for c in "*?[")


class Series:
    """The files of the series and their versions at each patch."""

    def __init__(self, spec, files):
        """spec: parsed series.txt; files: {path: final text}."""
        self.spec = spec
        self.files = files
        self.units = {p: parse_file(p, t) for p, t in files.items()}
        self.n = len(spec.patches)
        self._assign()

    def _assign(self):
        """Find the patch of every unit; check every directive matches."""
        added = {}
        for p in self.spec.patches:
            for d in p.directives:
                if d.kind != "add":
                    continue
                for path in d.names:
                    if path not in self.files:
                        raise SeriesError(f"{d.where()}: 'add {path}': no "
                                          "such file in the repository")
                    if path in added:
                        raise SeriesError(f"{d.where()}: {path} is already "
                                          f"added by patch {added[path]}")
                    added[path] = p.number
        self.added = added
        claim = {}          # (path, unit name) -> (patch, exact, directive)
        for p in self.spec.patches:
            for d in p.directives:
                if d.kind != "units":
                    continue
                if d.path not in self.files:
                    raise SeriesError(f"{d.where()}: no such file {d.path}")
                units = [u for u in self.units[d.path] if not u.skeleton]
                for pat in d.names:
                    hits = [u for u in units if fnmatch.fnmatchcase(u.name,
                                                                   pat)]
                    if not hits:
                        raise SeriesError(
                            f"{d.where()}: no unit {pat!r} in {d.path}; "
                            "known units: " + self._unit_list(d.path))
                    exact = not _is_glob(pat)
                    for u in hits:
                        key = (d.path, u.name)
                        old = claim.get(key)
                        if old and old[1] == exact:
                            raise SeriesError(
                                f"{d.where()}: unit {u.name!r} of {d.path} "
                                f"is also claimed at {old[2].where()}")
                        if not old or exact:
                            claim[key] = (p.number, exact, d)
        self.unit_patch = {}
        for path, units in self.units.items():
            for u in units:
                if u.skeleton:
                    continue
                key = (path, u.name)
                if key in claim:
                    self.unit_patch[key] = claim[key][0]
                elif path in added:
                    self.unit_patch[key] = added[path]
                else:
                    raise SeriesError(
                        f"{path}: unit {u.name!r} is in no patch; add it to "
                        "a 'units' directive or 'add' the file in "
                        "scripts/vx3-series/series.txt")
        for path in self.files:
            if path not in added and not any(
                    k[0] == path for k in self.unit_patch):
                raise SeriesError(f"{path} is in no patch of "
                                  "scripts/vx3-series/series.txt")
        # Skeleton units come with the first unit of their file
        self.file_patch = {}
        for path, units in self.units.items():
            nums = [self.unit_patch[(path, u.name)] for u in units
                    if not u.skeleton]
            if path in added:
                nums.append(added[path])
            self.file_patch[path] = min(nums)
        # Edits of a unit must come after the unit itself
        for p in self.spec.patches:
            for d in p.directives:
                if d.kind in ("members", "lines", "change"):
                    if d.path not in self.files:
                        raise SeriesError(f"{d.where()}: no such file "
                                          f"{d.path}")
                    key = (d.path, d.unit)
                    if key not in self.unit_patch:
                        raise SeriesError(
                            f"{d.where()}: no unit {d.unit!r} in {d.path}; "
                            "known units: " + self._unit_list(d.path))
                    if self.unit_patch[key] >= p.number:
                        raise SeriesError(
                            f"{d.where()}: {d.unit!r} of {d.path} comes in "
                            f"patch {self.unit_patch[key]}, so patch "
                            f"{p.number} cannot change it")
        # Derive every version once: this checks every directive
        self.versions = {}
        for k in range(1, self.n + 1):
            self.versions[k] = {path: self._derive(path, k)
                                for path in self.files}
        for path, text in self.files.items():
            if self.versions[self.n][path] != text:
                raise SeriesError(f"{path}: the last patch does not "
                                  "reproduce the file (internal error)")

    def _unit_list(self, path):
        names = [u.name for u in self.units[path] if not u.skeleton]
        return ", ".join(repr(n) for n in names)

    def _derive(self, path, k):
        """The text of path at patch k, or None if it does not exist."""
        if self.file_patch[path] > k:
            return None
        units = self.units[path]
        present = []
        for u in units:
            if u.skeleton:
                present.append((u, list(u.lines)))
            elif self.unit_patch[(path, u.name)] <= k:
                present.append((u, list(u.lines)))
        texts = {id(u): lines for u, lines in present}
        # Undo the edits of later patches, latest first
        for p in reversed(self.spec.patches):
            if p.number <= k:
                break
            for d in reversed(p.directives):
                if d.kind not in ("members", "lines", "change") or \
                        d.path != path:
                    continue
                u = next(x for x in units if x.name == d.unit and
                         not x.skeleton)
                if id(u) not in texts:
                    continue
                texts[id(u)] = _tidy(_undo(d, texts[id(u)]))
        out = []
        prev_index = None
        index = {id(u): i for i, u in enumerate(units)}
        for u, _ in present:
            i = index[id(u)]
            if prev_index is not None:
                gap = any(units[j].blank_before
                          for j in range(prev_index + 1, i + 1))
                if gap:
                    out.append("")
            out.extend(texts[id(u)])
            prev_index = i
        return "\n".join(out) + "\n"


def _tidy(lines):
    """Drop the blank lines an edit leaves doubled, after an opening brace
    or before a closing one."""
    out = []
    for i, line in enumerate(lines):
        if line == " *" and out and out[-1] in (" *", "/**"):
            continue
        if not line.strip():
            if not out or not out[-1].strip() or out[-1].endswith("{"):
                continue
            nxt = lines[i + 1] if i + 1 < len(lines) else ""
            if nxt.strip() in ("}", "};") or not nxt.strip():
                continue
        out.append(line)
    return out


def _matches(needle, line):
    """Anchors are substrings of a line, or regular expressions if they
    start with '^'."""
    if needle.startswith("^"):
        return re.search(needle, line) is not None
    return needle in line


def _find_line(lines, needle, d, start=0):
    hits = [i for i in range(start, len(lines)) if _matches(needle, lines[i])]
    if not hits:
        raise SeriesError(f"{d.where()}: no line with {needle!r} in "
                          f"{d.unit!r} of {d.path} (as of patch {d.patch})")
    return hits


def _undo(d, lines):
    """Return the unit's lines as they were before d's patch."""
    if d.kind == "lines":
        first = _find_line(lines, d.first, d)
        if len(first) != 1:
            raise SeriesError(f"{d.where()}: {len(first)} lines with "
                              f"{d.first!r} in {d.unit!r} of {d.path}")
        a = first[0]
        b = a if d.last is None else _find_line(lines, d.last, d, a + 1)[0]
        return lines[:a] + lines[b + 1:]
    if d.kind == "change" and d.new is None:
        old = d.old.split("\n") if d.old else []
        if d.first is None:
            return old
        first = _find_line(lines, d.first, d)
        if len(first) != 1:
            raise SeriesError(f"{d.where()}: {len(first)} lines with "
                              f"{d.first!r} in {d.unit!r} of {d.path}")
        a = first[0]
        b = a if d.last is None else _find_line(lines, d.last, d, a + 1)[0]
        return lines[:a] + old + lines[b + 1:]
    if d.kind == "change":
        text = "\n".join(lines)
        count = text.count(d.new)
        if count != 1:
            raise SeriesError(f"{d.where()}: {d.new!r} occurs {count} times "
                              f"in {d.unit!r} of {d.path} (as of patch "
                              f"{d.patch}), expected once")
        return text.replace(d.new, d.old).split("\n")
    if d.kind == "members":
        for name in d.names:
            lines = _drop_member(lines, name, d)
        return lines
    raise AssertionError(d.kind)


def _drop_member(lines, name, d):
    """Drop a struct member (with its kernel-doc entry) or a designated
    initializer '.name = ...,' from a unit."""
    decl = re.compile(r"^\s+[^*/].*\b" + re.escape(name) +
                      r"\s*(\[[^\]]*\])?(\s+__\w+\([^)]*\))?\s*;")
    init = re.compile(r"^\s*\." + re.escape(name) + r"\s*=")
    hits = [i for i, x in enumerate(lines) if decl.match(x) or init.match(x)]
    if len(hits) != 1:
        raise SeriesError(f"{d.where()}: {len(hits)} declarations of member "
                          f"{name!r} in {d.unit!r} of {d.path}, expected "
                          "one")
    i = hits[0]
    end = i
    # A designated initializer may continue over several lines
    if init.match(lines[i]):
        while not lines[end].rstrip().endswith(",") and end + 1 < len(lines):
            end += 1
    lines = lines[:i] + lines[end + 1:]
    doc = [j for j, x in enumerate(lines)
           if re.match(r"^ \* @" + re.escape(name) + r":", x)]
    if len(doc) > 1:
        raise SeriesError(f"{d.where()}: {len(doc)} kernel-doc entries for "
                          f"@{name} in {d.unit!r}")
    if doc:
        j = doc[0]
        e = j + 1
        while e < len(lines) and re.match(r"^ \*(\t|  )\s*[^\s@]",
                                          lines[e]):
            e += 1
        lines = lines[:j] + lines[e:]
    return lines


def list_units(path, text):
    """Lines 'name (N lines)' for every unit of a file, for authors of
    series.txt."""
    out = []
    for u in parse_file(path, text):
        tag = " [skeleton]" if u.skeleton else ""
        out.append(f"{u.name}  ({len(u.lines)} lines){tag}")
    return out


def read_repo_files(root):
    """The files of the repository that the series carries: tracked and
    untracked files under SERIES_ROOTS, without ignored build products."""
    import subprocess
    out = subprocess.run(["git", "-C", root, "ls-files", "-z", "--cached",
                          "--others", "--exclude-standard", "--",
                          *SERIES_ROOTS], check=True,
                         stdout=subprocess.PIPE).stdout.decode()
    files = {}
    for path in sorted(set(filter(None, out.split("\0")))):
        full = os.path.join(root, path)
        if not os.path.isfile(full):
            continue        # deleted in the work tree
        with open(full, encoding="utf-8") as f:
            files[path] = f.read()
    return files


def load(root):
    """Parse series.txt and the repository's files into a Series."""
    spec_path = os.path.join(root, "scripts", "vx3-series", "series.txt")
    with open(spec_path, encoding="utf-8") as f:
        spec = parse_spec(f.read())
    return Series(spec, read_repo_files(root))
