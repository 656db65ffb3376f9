#!/usr/bin/env bash
# The code dialect (docs/architecture.md, "Code dialect"): .clang-format for layout, the naming rule
# and a few bug checks of .clang-tidy. C++ only: the Linux kernel module and its tools
# (driver/linux/, kernel style) and the RTL (rtl/) are not C++ and keep their own styles.
#
#   tools/dialect.sh check [BUILD_DIR]   fail (exit 1) on any file clang-format would change or any
#                                        clang-tidy finding; what make test runs (Dialect.Check)
#   tools/dialect.sh apply [BUILD_DIR]   rename what breaks the naming rule (clang-tidy's fixes,
#                                        every use in every translation unit) and reformat
#                                        every file: how the tree was brought to the dialect
#   -j N                                 clang-tidy processes (default 2)
#
# BUILD_DIR (default build) must hold a configured and built tree: clang-tidy reads its
# compile_commands.json and needs the generated headers (Verilator's) the sources include. The
# fuzz targets are a separate project (fuzz/CMakeLists.txt) outside that database: their compile
# commands are made in a scratch directory with clang++ and merged in.
# GoogleTest fixtures keep CamelCase, since their names are the tests' names: every first argument
# of TEST_F, TEST_P, TYPED_TEST, TYPED_TEST_P and TYPED_TEST_SUITE in tests/ is added to the ignore
# lists for classes and structs. gtest's PrintTo hook is exempt by name in .clang-tidy.
# Exits 2 when clang-tidy-14, run-clang-tidy-14, clang-apply-replacements-14, clang-format-14 or
# python3 are missing (tools/install-deps.sh installs them).
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
mode="${1:-}"
[ "$mode" = check ] || [ "$mode" = apply ] || { echo "usage: tools/dialect.sh check|apply [BUILD_DIR] [-j N]" >&2; exit 2; }
shift
build="$root/build"
jobs=2
while [ $# -gt 0 ]; do
  case "$1" in
    -j) shift; jobs="$1" ;;
    *) build="$(cd "$1" && pwd)" ;;
  esac
  shift
done

for tool in clang-tidy-14 run-clang-tidy-14 clang-apply-replacements-14 clang-format-14 python3; do
  if ! command -v "$tool" > /dev/null 2>&1; then
    echo "dialect.sh: $tool is not installed (tools/install-deps.sh installs it)" >&2
    exit 2
  fi
done
if [ ! -f "$build/compile_commands.json" ]; then
  echo "dialect.sh: $build/compile_commands.json missing: configure and build first (make build)" >&2
  exit 2
fi

cd "$root"
scratch="$(mktemp -d)"
trap 'rm -rf "$scratch"' EXIT

# The C++ files of the dialect: tracked sources and headers outside the kernel module and the RTL.
git ls-files -- models platform driver firmware tools bench fuzz tests |
  grep -E '\.(cpp|h|hpp)$' | grep -v -E '^driver/linux/' > "$scratch/files"

# Compile commands: the main build's, plus the fuzz project's (configured only, not built).
mkdir -p "$scratch/cc"
if CXX=clang++ cmake -S fuzz -B "$scratch/fuzz" -DCMAKE_EXPORT_COMPILE_COMMANDS=ON > "$scratch/fuzz.log" 2>&1; then
  fuzz_cc="$scratch/fuzz/compile_commands.json"
else
  echo "dialect.sh: configuring fuzz/ failed (see below); its sources are left out" >&2
  tail -n 20 "$scratch/fuzz.log" >&2
  fuzz_cc=""
fi
python3 - "$build/compile_commands.json" "$fuzz_cc" "$root" > "$scratch/cc/compile_commands.json" <<'PY'
import json, os, sys
main, fuzz, root = sys.argv[1], sys.argv[2], sys.argv[3]
entries = [e for e in json.load(open(main))]
if fuzz:
    entries += json.load(open(fuzz))
# One entry per project source (a fuzz target's library sources are also in the main build).
# Paths written as "fuzz/../models/..." (fuzz/CMakeLists.txt's RNIC_ROOT) name the same headers as
# "models/...": normalised, so that clang-apply-replacements sees one file, not two that conflict.
seen, out = set(), []
for e in entries:
    f = os.path.normpath(os.path.join(e["directory"], e["file"]))
    if not f.startswith(root + "/") or f in seen:
        continue
    seen.add(f)
    e = dict(e, file=f)
    for key in ("command", "arguments"):
        if key in e:
            e[key] = (e[key].replace(root + "/fuzz/../", root + "/") if key == "command"
                      else [a.replace(root + "/fuzz/../", root + "/") for a in e[key]])
    out.append(e)
json.dump(out, sys.stdout, indent=1)
PY

# The configuration: .clang-tidy with the fixtures added to the ignore lists.
fixtures="$(git grep -h -o -E '\b(TEST_F|TEST_P|TYPED_TEST|TYPED_TEST_P|TYPED_TEST_SUITE)\([[:space:]]*[A-Za-z_][A-Za-z0-9_]*' -- tests fuzz |
            sed -E 's/.*\([[:space:]]*//' | sort -u | paste -sd'|' -)"
config="$(python3 - "$root/.clang-tidy" "$fixtures" "$mode" <<'PY'
import json, sys, yaml
cfg = yaml.safe_load(open(sys.argv[1]))
fixtures, mode = sys.argv[2], sys.argv[3]
opts = cfg.get("CheckOptions", [])
if fixtures:
    for kind in ("Class", "Struct"):
        opts.append({"key": f"readability-identifier-naming.{kind}IgnoredRegexp", "value": f"^({fixtures})$"})
cfg["CheckOptions"] = opts
if mode == "apply":
    # Only the renames; findings of the other checks are for people to fix.
    cfg["Checks"] = "-*,readability-identifier-naming"
    cfg["WarningsAsErrors"] = ""
print(json.dumps(cfg))
PY
)"

files_regex="^$root/($(cut -d/ -f1 "$scratch/files" | sort -u | paste -sd'|' -))/"
status=0
if [ "$mode" = apply ]; then
  # One fixes file per translation unit, then one clang-apply-replacements over all of them: it
  # merges the identical edits many units make to a shared header, and refuses (and says where)
  # when two edits conflict, in which case nothing is renamed.
  echo "dialect.sh: renaming with clang-tidy ($(wc -l < "$scratch/files") files, -j $jobs)" >&2
  fixes="$scratch/fixes"
  mkdir -p "$fixes"
  python3 -c 'import json,sys; [print(e["file"]) for e in json.load(open(sys.argv[1]))]' \
    "$scratch/cc/compile_commands.json" | grep -E "$files_regex" | nl -nln | tr -s ' \t' ' ' |
    xargs -P "$jobs" -L 1 sh -c 'clang-tidy-14 -p "$0" -config="$1" -quiet -export-fixes="$2/$3.yaml" "$4" > "$2/$3.log" 2>&1 || true' \
      "$scratch/cc" "$config" "$fixes"
  # clang-tidy 14 places some renames at the wrong offset: at the start of the declaration
  # ("static", "const") instead of the type's name in it, or at the name of the struct that
  # declares a member of that type. Such an edit would overwrite the wrong word, and
  # clang-apply-replacements refuses the whole set when it meets it beside the right one. An edit
  # whose replaced text is not the same identifier as its new name (up to case, underscores and a
  # constant's k) is moved to the nearest occurrence of that identifier within the statement, or
  # dropped when there is none. The renames are written to $scratch/renames for the second pass.
  python3 - "$fixes" "$root" "$scratch/renames" <<'PY' >&2
import glob, os, re, sys, yaml
fixes, root, renames_out = sys.argv[1], sys.argv[2], sys.argv[3]
ident = re.compile(rb"[A-Za-z_][A-Za-z0-9_]*")
def norm(name):
    return name.replace("_", "").lower()
def same_identifier(old, new):
    o, n = norm(old), norm(new)
    return o == n or n == "k" + o
texts, moved, dropped, renames = {}, [], [], {}
for path in sorted(glob.glob(os.path.join(fixes, "*.yaml"))):
    doc = yaml.safe_load(open(path)) or {}
    changed = False
    for diag in doc.get("Diagnostics") or []:
        msg = diag.get("DiagnosticMessage") or {}
        kept = []
        for r in msg.get("Replacements") or []:
            f, new = r["FilePath"], r["ReplacementText"]
            if f not in texts:
                texts[f] = open(f, "rb").read() if os.path.isfile(f) else b""
            text = texts[f]
            old = text[r["Offset"]:r["Offset"] + r["Length"]].decode("utf-8", "replace")
            if not same_identifier(old, new):
                changed = True
                lo, hi = max(0, r["Offset"] - 200), min(len(text), r["Offset"] + 200)
                best = None
                for m in ident.finditer(text, lo, hi):
                    word = m.group().decode()
                    if word != new and same_identifier(word, new):
                        if best is None or abs(m.start() - r["Offset"]) < abs(best.start() - r["Offset"]):
                            best = m
                where = f"{os.path.relpath(f, root)}:{r['Offset']}: '{old}' -> '{new}'"
                if best is None:
                    dropped.append(where)
                    continue
                moved.append(f"{where} moved to {best.start()}")
                r = dict(r, Offset=best.start(), Length=best.end() - best.start())
                old = best.group().decode()
            kept.append(r)
            if old != new:
                renames[old] = new
        msg["Replacements"] = kept
    if changed:
        with open(path, "w") as out:
            yaml.safe_dump(doc, out, sort_keys=False)
print(f"dialect.sh: {len(set(moved))} misplaced renames moved to their identifier, {len(set(dropped))} dropped")
for d in sorted(set(dropped)):
    print(f"dialect.sh: dropped a misplaced rename: {d}")
with open(renames_out, "w") as out:
    for old, new in sorted(renames.items()):
        out.write(f"{old} {new}\n")
PY
  if ! clang-apply-replacements-14 "$fixes" > "$scratch/apply.log" 2>&1; then
    cat "$scratch/apply.log" >&2
    echo "dialect.sh: clang-apply-replacements failed: nothing renamed" >&2
    exit 1
  fi
  [ -s "$scratch/apply.log" ] && head -n 40 "$scratch/apply.log" >&2
  # Second pass: clang-tidy 14 leaves some references unrenamed (a class template named in a
  # template-id, SlicingTables<P>, is one). Every identifier it renamed whose old spelling has a
  # capital (types, constants, enumerators; never a lower-case member, whose old spelling is an
  # ordinary word) is renamed where it remains in code, outside comments and string literals.
  python3 - "$scratch/renames" "$scratch/files" <<'PY' >&2
import re, sys
renames = {}
for line in open(sys.argv[1]):
    old, new = line.split()
    if len(old) >= 3 and re.search(r"[A-Z]", old):
        renames[old] = new
files = [l.strip() for l in open(sys.argv[2]) if l.strip()]
# Code, and the spans it must not touch: comments, string and character literals, raw strings,
# and a GoogleTest macro's suite and test names (TEST(Crc32c, Residue) names a test, not the type).
skip = re.compile(r'\b(?:TEST|TEST_F|TEST_P|TYPED_TEST|TYPED_TEST_P|TYPED_TEST_SUITE|TYPED_TEST_SUITE_P|INSTANTIATE_TEST_SUITE_P|INSTANTIATE_TYPED_TEST_SUITE_P|REGISTER_TYPED_TEST_SUITE_P)\s*\(\s*\w+\s*(?:,\s*\w+)?|//[^\n]*|/\*.*?\*/|R"([^(\s]*)\(.*?\)\1"|"(?:\\.|[^"\\\n])*"|\'(?:\\.|[^\'\\\n])*\'', re.S)
ident = re.compile(r"\b[A-Za-z_][A-Za-z0-9_]*\b")
foreign = re.compile(r"\b(?:testing|std|boost|json|sc_core|sc_dt|tlm|tlm_utils)::\s*$")
total = 0
for f in files:
    text = open(f, encoding="utf-8").read()
    out, pos, n = [], 0, 0
    def code(chunk):
        global n
        def sub(m):
            global n
            w = m.group()
            # A name another library owns (::testing::TempDir, std::..., SystemC's) stays.
            if foreign.search(chunk, max(0, m.start() - 40), m.start()):
                return w
            if w in renames:
                n += 1
                return renames[w]
            return w
        return ident.sub(sub, chunk)
    for m in skip.finditer(text):
        out.append(code(text[pos:m.start()]))
        out.append(m.group())
        pos = m.end()
    out.append(code(text[pos:]))
    if n:
        open(f, "w", encoding="utf-8").write("".join(out))
        total += n
print(f"dialect.sh: second pass renamed {total} references clang-tidy left")
PY
  echo "dialect.sh: formatting with clang-format" >&2
  xargs -a "$scratch/files" clang-format-14 -i --style=file
  echo "dialect.sh: done; $(git diff --shortstat)" >&2
else
  bad_format=0
  while read -r f; do
    if ! clang-format-14 --style=file --dry-run --Werror "$f" > /dev/null 2>&1; then
      echo "dialect.sh: $f is not formatted (clang-format-14 -i --style=file $f)"
      bad_format=$((bad_format + 1))
    fi
  done < "$scratch/files"
  run-clang-tidy-14 -p "$scratch/cc" -config="$config" -j "$jobs" -quiet \
    -clang-tidy-binary "$(command -v clang-tidy-14)" "$files_regex" > "$scratch/tidy.log" 2>&1 || true
  findings="$(sed 's/\x1b\[[0-9;]*m//g' "$scratch/tidy.log" | grep -E '^[^ ]+:[0-9]+:[0-9]+: (error|warning):' | sort -u || true)"
  n_findings=0
  [ -n "$findings" ] && n_findings="$(printf '%s\n' "$findings" | wc -l)"
  [ -n "$findings" ] && printf '%s\n' "$findings"
  tus="$(python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))))' "$scratch/cc/compile_commands.json")"
  echo "dialect.sh: $(wc -l < "$scratch/files") files, $bad_format not formatted; clang-tidy over $tus translation units, $n_findings findings"
  [ "$bad_format" -eq 0 ] && [ "$n_findings" -eq 0 ] || status=1
fi
exit $status
