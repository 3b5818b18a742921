#!/usr/bin/env python3
"""The rules the house keeps, checked from the sources (no build needed).

1. No import circles between the files of each crate (`core/src`, `adapters/src`,
   `adapters/cli/src`): file A depends on file B when A names a path (in a `use` or in code) that
   resolves to an item B defines (re-exports are followed to the file that defines the item; a
   `mod` declaration alone is no import). Every strongly connected group of more than one file is
   a circle. A parent file that defines what its children use, and uses them in turn, is one: keep
   the shared items in a file of their own and the parent a face.
2. No import of a crate's own root re-exports from inside the crate: `crate::Name`, where `Name`
   is an item the crate root re-exports (`pub use …` in `lib.rs`), is for users; inside the crate
   name the module that defines it.
3. No non-test file over 800 lines (counted up to its `#[cfg(test)]` module), and no folder holding
   more than 12 `.rs` files.

Test code is left out: `#[cfg(test)]` modules (inline or in files of their own) and the `tests/`
folders. The exceptions are in ALLOWED below, each with its reason: a folder left out of every
rule, a file allowed over the lines, a folder over the files, a circle named by its files.

Usage: python3 .ci/house.py [--verbose]      (from the repository root; exit 1 on a broken rule)
"""
from __future__ import annotations

import os
import re
import sys
from dataclasses import dataclass, field

MAX_LINES = 800
MAX_FILES_IN_FOLDER = 12

CRATES = {
    # crate root file: the folder the rules apply to
    "core/src/lib.rs": "core/src",
    "adapters/src/lib.rs": "adapters/src",
    "adapters/cli/src/main.rs": "adapters/cli/src",
}

# Exceptions, each with its reason. Paths are from the repository root.
ALLOWED = {
    # Folders left out of every rule (their files, their subfolders, their crate's circles).
    "tree": set(),
    # rule "lines": files allowed over MAX_LINES
    "lines": {
        # The fuzz harness: one structured op-sequence target whose operation bytes keep their
        # meaning (the seeds depend on it); it is test code compiled into the crate behind the
        # `fuzzing` feature.
        "core/src/fuzzing/connection/mod.rs",
    },
    # rule "folder": folders allowed over MAX_FILES_IN_FOLDER
    "folder": set(),
    # rule "circle": circles allowed, each named by its files (all of them, sorted)
    "circle": set(),
}


def allowed_tree(rel: str) -> bool:
    """Whether `rel` (a file or folder) lies in a folder left out of every rule."""
    return any(rel == t or rel.startswith(t + "/") for t in ALLOWED["tree"])


def strip_comments_and_strings(text: str) -> str:
    """Blanks out comments, string and char literals, keeping line breaks and offsets."""
    out = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append(" " * (j - i))
            i = j
        elif text.startswith("/*", i):
            depth, j = 1, i + 2
            while j < n and depth:
                if text.startswith("/*", j):
                    depth, j = depth + 1, j + 2
                elif text.startswith("*/", j):
                    depth, j = depth - 1, j + 2
                else:
                    j += 1
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif c == "r" and re.match(r'r#*"', text[i:i + 260]) and not re.match(r"\w", text[i - 1] if i else " "):
            m = re.match(r'r(#*)"', text[i:])
            close = '"' + m.group(1)
            j = text.find(close, i + len(m.group(0)))
            j = n if j < 0 else j + len(close)
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif c == '"':
            j = i + 1
            while j < n and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            j += 1
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif c == "'":
            # A char literal ('a', '\n', '\u{1F600}') or a lifetime ('a): only literals are blanked.
            m = re.match(r"'(\\u\{[0-9a-fA-F]+\}|\\.|[^\\'])'", text[i:i + 12])
            if m:
                out.append(" " * len(m.group(0)))
                i += len(m.group(0))
            else:
                out.append(c)
                i += 1
        else:
            out.append(c)
            i += 1
    return "".join(out)


def matching_brace(text: str, open_at: int) -> int:
    depth = 0
    for j in range(open_at, len(text)):
        if text[j] == "{":
            depth += 1
        elif text[j] == "}":
            depth -= 1
            if depth == 0:
                return j
    return len(text) - 1


ATTRS = r"((?:#\[[^\]]*\]\s*)*)"
MOD_RE = re.compile(ATTRS + r"(?:pub(?:\([^)]*\))?\s+)?mod\s+([A-Za-z_]\w*)\s*([;{])")
TEST_CFG = re.compile(r"#\[cfg\((?:all\()?test\b")


@dataclass
class Module:
    path: tuple  # module path from the crate root
    file: str    # the file holding it (repository-relative)
    children: dict = field(default_factory=dict)  # name -> Module
    parent: "Module | None" = None
    items_text: str = ""  # the non-test text of this module (inline modules: their block)


@dataclass
class SourceFile:
    path: str
    text: str       # stripped text, test modules removed
    code_lines: int  # lines up to the first #[cfg(test)] module


def remove_test_modules(text: str) -> str:
    """Blanks `#[cfg(test)] mod x { … }` blocks (the declarations `mod x;` stay, handled apart)."""
    while True:
        for m in MOD_RE.finditer(text):
            if m.group(3) == "{" and TEST_CFG.search(m.group(1) or ""):
                end = matching_brace(text, m.end() - 1)
                text = text[:m.start()] + re.sub(r"[^\n]", " ", text[m.start():end + 1]) + text[end + 1:]
                break
        else:
            return text


def code_line_count(raw: str) -> int:
    """Lines up to the first `#[cfg(test)]` that starts a module, the way the rule counts them."""
    lines = raw.split("\n")
    for idx, line in enumerate(lines):
        if TEST_CFG.match(line.strip()):
            rest = "\n".join(lines[idx:idx + 4])
            if re.search(r"#\[cfg\([^\n]*\)\]\s*(?:#\[[^\n]*\]\s*)*(?:pub(?:\([^)]*\))?\s+)?mod\s", rest):
                return idx
    return len(lines) - (1 if raw.endswith("\n") else 0)


def load(root: str, rel: str) -> SourceFile:
    with open(os.path.join(root, rel), encoding="utf-8") as f:
        raw = f.read()
    stripped = remove_test_modules(strip_comments_and_strings(raw))
    return SourceFile(rel, stripped, code_line_count(raw))


def build_tree(root: str, crate_root: str, files: dict) -> Module:
    top = Module((), crate_root)
    files[crate_root] = load(root, crate_root)

    def module_dir(file: str, is_root_like: bool, name_path: tuple) -> str:
        d = os.path.dirname(file)
        if is_root_like:
            return d
        return os.path.join(d, os.path.splitext(os.path.basename(file))[0])

    def walk(mod: Module, text: str, base_dir: str):
        mod.items_text = text
        pos = 0
        while True:
            m = MOD_RE.search(text, pos)
            if not m:
                break
            attrs, name, kind = m.group(1) or "", m.group(2), m.group(3)
            if TEST_CFG.search(attrs):
                pos = m.end()
                continue
            if kind == "{":
                end = matching_brace(text, m.end() - 1)
                child = Module(mod.path + (name,), mod.file, parent=mod)
                mod.children[name] = child
                walk(child, text[m.end():end], os.path.join(base_dir, name))
                # The inline module's text belongs to it, not to its parent.
                text = text[:m.start()] + " " * (end + 1 - m.start()) + text[end + 1:]
                mod.items_text = text
                pos = m.start()
                continue
            pm = re.search(r'#\[path\s*=\s*"([^"]*)"\]', attrs)
            if pm:
                rel = os.path.normpath(os.path.join(os.path.dirname(mod.file), pm.group(1)))
            else:
                cand = [os.path.join(base_dir, name + ".rs"), os.path.join(base_dir, name, "mod.rs")]
                rel = next((c for c in cand if os.path.exists(os.path.join(root, c))), None)
                if rel is None:
                    raise SystemExit(f"house: cannot find the file of `mod {name}` in {mod.file}")
            sf = load(root, rel)
            files[rel] = sf
            child = Module(mod.path + (name,), rel, parent=mod)
            mod.children[name] = child
            root_like = os.path.basename(rel) == "mod.rs"
            walk(child, sf.text, module_dir(rel, root_like, child.path))
            pos = m.end()

    walk(top, files[crate_root].text, os.path.dirname(crate_root))
    return top


USE_RE = re.compile(r"\buse\s+([^;]+);")
PATH_RE = re.compile(r"(?<![\w:])((?:crate|super|self|[a-z_]\w*)(?:\s*::\s*[A-Za-z_]\w*)+)")


def expand_use(tree: str) -> list:
    """`a::{b, c::{d, e}}` → [[a, b], [a, c, d], [a, c, e]] (renames already stripped; a glob
    keeps its prefix)."""
    tree = re.sub(r"\s+", "", tree)
    out = []

    def rec(prefix: list, s: str):
        # split s at top-level commas
        parts, depth, cur = [], 0, ""
        for ch in s:
            if ch == "{":
                depth += 1
            elif ch == "}":
                depth -= 1
            if ch == "," and depth == 0:
                parts.append(cur)
                cur = ""
            else:
                cur += ch
        if cur:
            parts.append(cur)
        for p in parts:
            if "{" in p:
                head, inner = p.split("{", 1)
                inner = inner[: inner.rfind("}")]
                head_segs = [x for x in head.split("::") if x]
                rec(prefix + head_segs, inner)
            else:
                segs = [x for x in p.split("::") if x and x != "*"]
                if segs and segs[-1] == "self":
                    segs = segs[:-1]
                out.append(prefix + segs)

    rec([], tree)
    return out


def strip_rename(tree: str) -> str:
    return re.sub(r"\s+as\s+[A-Za-z_]\w*", "", tree)


def reexport_table(mod: Module) -> dict:
    """name -> path segments, for each `pub use` / `pub(crate) use` item of a module."""
    if hasattr(mod, "_reexports"):
        return mod._reexports
    table = {}
    for m in re.finditer(r"pub(?:\([^)]*\))?\s+use\s+([^;]+);", mod.items_text):
        tree = m.group(1)
        for segs in expand_use(tree):
            if segs:
                table[segs[-1]] = segs
        for rm in re.finditer(r"([A-Za-z_][\w:]*)\s+as\s+([A-Za-z_]\w*)", tree):
            table[rm.group(2)] = [s for s in rm.group(1).split("::") if s]
    mod._reexports = table
    return table


def resolve_item(mod: Module, top: Module, segs: list, depth: int = 0):
    """Like resolve, then follows re-exports to the module that defines the item."""
    r = resolve(mod, top, segs)
    if r is None or depth > 8:
        return r
    target, rest = r
    if rest:
        table = reexport_table(target)
        if rest[0] in table:
            inner = resolve_item(target, top, table[rest[0]] + rest[1:], depth + 1)
            if inner is not None:
                return inner
    return r


def resolve(mod: Module, top: Module, segs: list):
    """The module a path lands in (the deepest module it names), or None if not ours."""
    if not segs:
        return None
    if segs[0] == "crate":
        cur, rest = top, segs[1:]
    elif segs[0] in ("self", "super"):
        cur, rest = mod, segs
        while rest and rest[0] in ("self", "super"):
            if rest[0] == "super":
                cur = cur.parent
                if cur is None:
                    return None
            rest = rest[1:]
    elif segs[0] in mod.children:
        cur, rest = mod, segs
    else:
        return None
    while rest and rest[0] in cur.children:
        cur, rest = cur.children[rest[0]], rest[1:]
    return cur, rest


def root_reexports(top: Module) -> set:
    names = set()
    for m in USE_RE.finditer(top.items_text):
        start = m.start()
        if not re.search(r"pub(?:\([^)]*\))?\s+$", top.items_text[max(0, start - 20):start]):
            continue
        for segs in expand_use(strip_rename(m.group(1))):
            if segs and segs[-1] not in top.children:
                names.add(segs[-1])
    # renamed re-exports
    for m in re.finditer(r"pub\s+use\s+[^;]*?\bas\s+([A-Za-z_]\w*)", top.items_text):
        names.add(m.group(1))
    return names


def all_modules(m: Module):
    yield m
    for c in m.children.values():
        yield from all_modules(c)


def check_crate(root: str, crate_root: str, problems: list, verbose: bool):
    files: dict = {}
    top = build_tree(root, crate_root, files)
    reexports = root_reexports(top) if crate_root.endswith("lib.rs") else set()
    edges: dict = {}
    names: dict = {}
    for mod in all_modules(top):
        text = mod.items_text
        uses = [strip_rename(m.group(1)) for m in USE_RE.finditer(text)]
        code = USE_RE.sub(" ", text)
        paths = []
        for u in uses:
            paths.extend(expand_use(u))
        for m in PATH_RE.finditer(code):
            paths.append([s for s in re.split(r"\s*::\s*", m.group(1)) if s])
        for segs in paths:
            r = resolve_item(mod, top, segs)
            if r is None:
                continue
            target, rest = r
            if target.file != mod.file:
                edges.setdefault(mod.file, set()).add(target.file)
                names.setdefault((mod.file, target.file), set()).add("::".join(segs))
            # The re-export rule looks at the path as written, before re-exports are followed.
            first = resolve(mod, top, segs) if segs[0] == "crate" else None
            if (first is not None and first[0] is top and first[1] and first[1][0] in reexports
                    and mod.file != top.file):
                problems.append(f"root re-export: {mod.file} imports crate::{first[1][0]} "
                                f"(name the module that defines it)")
    # circles: strongly connected components (Tarjan, iterative)
    if not allowed_tree(os.path.dirname(crate_root)):
        for comp in sccs(set(files), edges):
            if len(comp) > 1 and tuple(sorted(comp)) not in ALLOWED["circle"]:
                cyc = sorted(comp)
                problems.append(f"import circle ({len(cyc)} files): " + ", ".join(cyc)
                                + "\n    " + "\n    ".join(
                                    f"{a} -> {b}: " + ", ".join(sorted(names[(a, b)])[:4])
                                    for a in cyc for b in sorted(edges.get(a, ())) if b in comp))
    # sizes
    for rel, sf in files.items():
        if sf.code_lines > MAX_LINES and rel not in ALLOWED["lines"] and not allowed_tree(rel):
            problems.append(f"file over {MAX_LINES} lines: {rel} ({sf.code_lines} before its tests)")
    if verbose:
        print(f"{crate_root}: {len(files)} files, {sum(len(v) for v in edges.values())} imports between them")
    return files


def sccs(nodes: set, edges: dict) -> list:
    index, low, on, stack, out = {}, {}, set(), [], []
    counter = [0]
    for start in sorted(nodes):
        if start in index:
            continue
        work = [(start, iter(sorted(edges.get(start, ()))))]
        index[start] = low[start] = counter[0]
        counter[0] += 1
        stack.append(start)
        on.add(start)
        while work:
            v, it = work[-1]
            for w in it:
                if w not in nodes:
                    continue
                if w not in index:
                    index[w] = low[w] = counter[0]
                    counter[0] += 1
                    stack.append(w)
                    on.add(w)
                    work.append((w, iter(sorted(edges.get(w, ())))))
                    break
                if w in on:
                    low[v] = min(low[v], index[w])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[v])
                if low[v] == index[v]:
                    comp = set()
                    while True:
                        w = stack.pop()
                        on.discard(w)
                        comp.add(w)
                        if w == v:
                            break
                    out.append(comp)
    return out


def check_folders(root: str, problems: list):
    for base in sorted(set(CRATES.values())):
        for d, _dirs, names in os.walk(os.path.join(root, base)):
            rel = os.path.relpath(d, root)
            count = sum(1 for n in names if n.endswith(".rs"))
            if count > MAX_FILES_IN_FOLDER and rel not in ALLOWED["folder"] and not allowed_tree(rel):
                problems.append(f"folder over {MAX_FILES_IN_FOLDER} .rs files: {rel} ({count})")


def problems_in(root: str) -> list:
    """Every broken rule of the crates in CRATES under `root`, each said once."""
    problems: list = []
    for crate_root in CRATES:
        check_crate(root, crate_root, problems, False)
    check_folders(root, problems)
    return list(dict.fromkeys(problems))


def main() -> int:
    verbose = "--verbose" in sys.argv
    root = os.getcwd()
    problems: list = []
    for crate_root in CRATES:
        check_crate(root, crate_root, problems, verbose)
    check_folders(root, problems)
    problems = list(dict.fromkeys(problems))
    for p in problems:
        print("house:", p)
    if problems:
        print(f"house: {len(problems)} broken rule(s)")
        return 1
    print("house: no import circles, no root re-exports imported, sizes within the rules")
    return 0


if __name__ == "__main__":
    sys.exit(main())
