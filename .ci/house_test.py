#!/usr/bin/env python3
"""The house's checker checked: each rule of .ci/house.py fires on a small crate that breaks it,
and stays quiet on one that keeps it. Run by .ci/house.sh; alone: python3 .ci/house_test.py"""
from __future__ import annotations

import importlib.util
import os
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
spec = importlib.util.spec_from_file_location("house", os.path.join(HERE, "house.py"))
house = importlib.util.module_from_spec(spec)
sys.modules["house"] = house
spec.loader.exec_module(house)


def problems(files: dict) -> list:
    """The checker's findings on a crate `k/src` made of `files` (path under src -> text)."""
    with tempfile.TemporaryDirectory() as root:
        for rel, text in files.items():
            path = os.path.join(root, "k/src", rel)
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "w", encoding="utf-8") as f:
                f.write(text)
        saved = house.CRATES
        house.CRATES = {"k/src/lib.rs": "k/src"}
        try:
            return house.problems_in(root)
        finally:
            house.CRATES = saved


def expect(name: str, files: dict, wanted: list):
    found = problems(files)
    missing = [w for w in wanted if not any(w in p for p in found)]
    extra = [p for p in found if not any(w in p for w in wanted)]
    if missing or extra:
        print(f"house_test: {name}: missing {missing}, unexpected {extra}")
        return False
    return True


CASES = [
    ("a parent file and its child using each other",
     {"lib.rs": "mod a;\n",
      "a.rs": "mod b;\npub struct Shared;\npub fn f() { b::g(); }\n",
      "a/b.rs": "use super::Shared;\npub fn g() -> Option<Shared> { None }\n"},
     ["import circle (2 files): k/src/a.rs, k/src/a/b.rs"]),
    ("the shared item in a file of its own: no circle",
     {"lib.rs": "mod a;\n",
      "a.rs": "mod b;\nmod shared;\npub fn f() { b::g(); }\n",
      "a/shared.rs": "pub struct Shared;\n",
      "a/b.rs": "use super::shared::Shared;\npub fn g() -> Option<Shared> { None }\n"},
     []),
    ("a re-export followed to the file that defines the item",
     {"lib.rs": "mod a;\nmod b;\nmod c;\n",
      "a.rs": "pub use crate::c::C;\n",
      "b.rs": "pub struct B(crate::a::C);\n",
      "c.rs": "pub struct C(Option<Box<crate::b::B>>);\n"},
     ["import circle (2 files): k/src/b.rs, k/src/c.rs"]),
    ("a crate's own root re-export imported from inside",
     {"lib.rs": "mod a;\nmod b;\npub use a::Thing;\n",
      "a.rs": "pub struct Thing;\n",
      "b.rs": "use crate::Thing;\npub fn f(_: Thing) {}\n"},
     ["root re-export: k/src/b.rs imports crate::Thing"]),
    ("a root re-export named in code, not in a use",
     {"lib.rs": "mod a;\nmod b;\npub use a::Thing;\n",
      "a.rs": "pub struct Thing;\n",
      "b.rs": "impl crate::Thing { pub fn f(&self) {} }\n"},
     ["root re-export: k/src/b.rs imports crate::Thing"]),
    ("the defining module named: no finding",
     {"lib.rs": "mod a;\nmod b;\npub use a::Thing;\n",
      "a.rs": "pub struct Thing;\n",
      "b.rs": "use crate::a::Thing;\npub fn f(_: Thing) {}\n"},
     []),
    ("a file over 800 lines before its tests",
     {"lib.rs": "mod big;\nmod fine;\n",
      "big.rs": "fn f() {}\n" * 801,
      "fine.rs": "fn f() {}\n" * 700 + "#[cfg(test)]\nmod tests {\n" + "  fn t() {}\n" * 300 + "}\n"},
     ["file over 800 lines: k/src/big.rs (801 before its tests)"]),
    ("a folder over 12 files",
     dict([("lib.rs", "mod m;\n"), ("m/mod.rs", "".join(f"mod f{i};\n" for i in range(12)))]
          + [(f"m/f{i}.rs", "") for i in range(12)]),
     ["folder over 12 .rs files: k/src/m (13)"]),
    ("test modules are left out of the circles",
     {"lib.rs": "mod a;\n",
      "a.rs": "pub struct A;\n#[cfg(test)]\nmod tests;\n",
      "a/tests.rs": "use super::A;\n"},
     []),
]


def main() -> int:
    ok = all([expect(*case) for case in CASES])
    print(f"house_test: {len(CASES)} cases, {'all passed' if ok else 'FAILED'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
