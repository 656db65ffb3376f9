#!/usr/bin/env python3
"""Checks that the include graph points down (docs/architecture.md, "Layers").

Follows every quoted #include of every C++ file under a checked folder, transitively, resolving it
as the build does (the including file's folder, models/, the project root, platform/), and fails
naming the chain when a file reaches what its layer must not know:

  models/                      nothing of firmware/, driver/ or platform/ (the firmware and the
                               driver are given to the models through their HAL and host_bus)
  models/pcie, pcix, host, dma nothing of models/rnic/ (generic bus blocks learn the device's
                               MSI-X layout and descriptor formats from their parameters)
  firmware/                    nothing of driver/ or platform/
  driver/ (C++)                nothing of firmware/ or platform/

  tools/check-include-graph.py [PROJECT_ROOT]
Prints one line per violation and exits 1, or prints a summary and exits 0.
"""
import os
import re
import sys

ROOT = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), ".."))
SEARCH = [os.path.join(ROOT, "models"), ROOT, os.path.join(ROOT, "platform")]
INCLUDE = re.compile(r'^\s*#\s*include\s*"([^"]+)"', re.MULTILINE)
SOURCES = (".h", ".hpp", ".cpp", ".cc")

# (folders checked, folders they must not reach)
RULES = [
    (["models"], ["firmware", "driver", "platform"]),
    (["models/pcie", "models/pcix", "models/host", "models/dma"], ["models/rnic"]),
    (["firmware"], ["driver", "platform"]),
    (["driver"], ["firmware", "platform"]),
]
SKIP = ["driver/linux"]  # C, built by Kbuild: includes only its own generated header


def rel(path):
    return os.path.relpath(path, ROOT).replace(os.sep, "/")


def under(path, folder):
    r = rel(path)
    return r == folder or r.startswith(folder + "/")


_includes = {}


def includes(path):
    """The project files `path` includes directly (system and third-party headers are not followed)."""
    if path not in _includes:
        with open(path, encoding="utf-8", errors="replace") as f:
            text = f.read()
        found = []
        for name in INCLUDE.findall(text):
            for base in [os.path.dirname(path)] + SEARCH:
                candidate = os.path.normpath(os.path.join(base, name))
                if candidate.startswith(ROOT + os.sep) and os.path.isfile(candidate):
                    found.append(candidate)
                    break
        _includes[path] = found
    return _includes[path]


def first_forbidden(start, forbidden):
    """The include chain from `start` to the first file under a forbidden folder, or None."""
    seen = {start}
    stack = [(start, [start])]
    while stack:
        path, chain = stack.pop()
        for inc in includes(path):
            if inc in seen:
                continue
            seen.add(inc)
            if any(under(inc, f) for f in forbidden):
                return chain + [inc]
            stack.append((inc, chain + [inc]))
    return None


def files_under(folder):
    for dirpath, dirnames, filenames in os.walk(os.path.join(ROOT, folder)):
        dirnames[:] = sorted(d for d in dirnames if not any(under(os.path.join(dirpath, d), s) for s in SKIP))
        for name in sorted(filenames):
            if name.endswith(SOURCES):
                yield os.path.join(dirpath, name)


def main():
    violations, checked = [], 0
    for folders, forbidden in RULES:
        for folder in folders:
            if not os.path.isdir(os.path.join(ROOT, folder)):
                violations.append(f"{folder}: folder missing (the rule checks nothing)")
                continue
            for path in files_under(folder):
                checked += 1
                chain = first_forbidden(path, forbidden)
                if chain:
                    violations.append(f"{rel(path)} reaches {rel(chain[-1])} (must not include {', '.join(forbidden)}): "
                                      + " -> ".join(rel(p) for p in chain))
    for v in violations:
        print(v)
    if violations:
        print(f"{len(violations)} include(s) point up")
        return 1
    print(f"include graph points down: {checked} file checks, {len(RULES)} rules")
    return 0


if __name__ == "__main__":
    sys.exit(main())
