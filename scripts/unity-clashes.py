#!/usr/bin/env python3
"""Lists file-local names that would clash in a unity build (scripts/test.sh builds that way).

A unity build joins up to 8 source files of a target into one translation unit, so two files of
the same target that each define, say, `namespace { int round_clamp(float, int, int) }` or
`constexpr int kMargin` no longer compile ("redefinition of ..."). This lists such names for
whole targets (batches shift as files are added, so any two files of a target may meet):
variables, types and functions with the same signature in anonymous namespaces or declared
static, and macros defined in more than one file. Overloads with different parameters and
repeated identical aliases (`using json = ...`) are legal and not listed.

Usage: scripts/unity-clashes.py BUILD_DIR    (a build dir configured with -DCMAKE_UNITY_BUILD=ON)
Needs universal-ctags (`apt-get install universal-ctags`). Exit status 1 when something is listed.
It reads declarations only: the compiler remains the judge (a `using namespace` that leaks into
the next file, for one, is not seen here)."""
import collections
import glob
import json
import os
import re
import subprocess
import sys


def targets_of(build):
    targets = collections.defaultdict(set)
    for unity in glob.glob(os.path.join(build, "**/Unity/unity_*.cxx"), recursive=True):
        target = unity.split("/Unity/")[0]
        with open(unity, encoding="utf-8", errors="replace") as f:
            targets[target].update(re.findall(r'#include "([^"]+)"', f.read()))
    return targets


def file_local_names(path, cache={}):
    if path in cache:
        return cache[path]
    out = subprocess.run(["ctags", "--output-format=json", "--language-force=C++",
                          "--fields=+nKzsSf", "--c++-kinds=+fvdtcsgenu-m", "-o", "-", path],
                         capture_output=True, text=True).stdout
    names = []
    for line in out.splitlines():
        try:
            tag = json.loads(line)
        except ValueError:
            continue
        if tag.get("_type") != "tag" or tag["name"].startswith("__anon"):
            continue
        kind, scope = tag.get("kind"), tag.get("scope", "")
        if kind in ("namespace", "local", "parameter", "member", "enumerator", "typedef"):
            continue
        if tag.get("scopeKind", "") not in ("", "namespace"):
            continue
        if not ("__anon" in scope or tag.get("file") is True or kind == "macro"):
            continue
        key = re.sub(r"__anon\w+", "<anon>", scope) + "::" + tag["name"]
        sig = tag.get("signature", "") if kind in ("function", "prototype") else ""
        names.append((key, kind, sig, tag.get("line")))
    cache[path] = names
    return names


def main():
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    targets = targets_of(sys.argv[1])
    if not targets:
        print(f"{sys.argv[1]}: no Unity/unity_*.cxx (configure with -DCMAKE_UNITY_BUILD=ON)",
              file=sys.stderr)
        return 2
    root = os.getcwd()
    found = 0
    for target, files in sorted(targets.items()):
        if len(files) < 2:
            continue
        seen = collections.defaultdict(list)
        for f in sorted(files):
            for key, kind, sig, line in file_local_names(f):
                seen[(key, kind if kind != "prototype" else "function", sig)].append(
                    f"{os.path.relpath(f, root)}:{line}")
        for (key, kind, sig), where in sorted(seen.items()):
            if len({w.rsplit(":", 1)[0] for w in where}) > 1:
                found += 1
                print(f"{os.path.basename(target).removesuffix('.dir')}: {kind} {key}{sig}: "
                      + ", ".join(where))
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
