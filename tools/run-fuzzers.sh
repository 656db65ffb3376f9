#!/usr/bin/env bash
# Builds the libFuzzer targets of fuzz/ (a standalone CMake project, clang++ with ASan + UBSan)
# into build/fuzz, then for every target:
#   1. replays its seed corpus fuzz/corpus/<target>/ (-runs=0): every seed must run clean;
#   2. fuzzes for FUZZ_SECONDS (default 10) with -seed=1, starting from a copy of the corpus in
#      build/fuzz/work/<target> (the repository is never written to).
# Any crash, invariant violation (__builtin_trap), sanitizer report, leak, timeout or
# out-of-memory makes the script exit non-zero; crash inputs are kept in build/fuzz/artifacts/.
# One summary line per target; the full libFuzzer logs are in build/fuzz/logs/.
#
# Environment: FUZZ_SECONDS (per target, default 10), FUZZ_TARGETS (space-separated subset),
# FUZZ_BUILD_DIR (default build/fuzz), FUZZ_JOBS (build parallelism, default 2), CXX_FUZZ (the
# compiler, default clang++; CXX is ignored so that a g++ setting does not leak in). Registered as the CTest test FuzzTargets (tests/fuzz/CMakeLists.txt).
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${FUZZ_BUILD_DIR:-$root/build/fuzz}
seconds=${FUZZ_SECONDS:-10}
jobs=${FUZZ_JOBS:-2}
export CXX=${CXX_FUZZ:-clang++}

if ! command -v "$CXX" > /dev/null; then
    echo "run-fuzzers: $CXX not found; install clang and libclang-rt-14-dev (tools/install-deps.sh)" >&2
    exit 1
fi

mkdir -p "$build/logs" "$build/work" "$build/artifacts"
start=$SECONDS
if ! { cmake -S "$root/fuzz" -B "$build" && cmake --build "$build" -j "$jobs"; } > "$build/logs/build.log" 2>&1; then
    tail -n 60 "$build/logs/build.log" >&2
    echo "run-fuzzers: building the fuzz targets failed (log: $build/logs/build.log)" >&2
    exit 1
fi
echo "run-fuzzers: built in $((SECONDS - start)) s with $("$CXX" --version | head -n 1)"

mapfile -t all_targets < "$build/fuzz-targets.txt"
if [ -n "${FUZZ_TARGETS:-}" ]; then
    read -r -a targets <<< "$FUZZ_TARGETS"
else
    targets=("${all_targets[@]}")
fi

# Sanitizer behaviour: stop at the first report, with a symbolized stack.
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1:symbolize=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
if [ -z "${ASAN_SYMBOLIZER_PATH:-}" ]; then
    for s in llvm-symbolizer llvm-symbolizer-14 /usr/lib/llvm-14/bin/llvm-symbolizer; do
        if command -v "$s" > /dev/null; then
            export ASAN_SYMBOLIZER_PATH=$(command -v "$s")
            break
        fi
    done
fi
# read_pcap's target writes its scratch files here.
export TMPDIR=$build/tmp
rm -rf "$TMPDIR"
mkdir -p "$TMPDIR"

# Value of "key: N" or of the first "key N" in a libFuzzer log (empty when absent).
fstat() { sed -n "s/^stat::$2: *//p" "$1" | tail -n 1; }
field() { grep -E "$2" "$1" | tail -n 1 | sed -E "s/.* $3: ([^ ]+).*/\1/"; }

failed=()
for t in "${targets[@]}"; do
    exe=$build/bin/$t
    corpus=$root/fuzz/corpus/$t
    if [ ! -x "$exe" ] || [ ! -d "$corpus" ]; then
        echo "$t: FAILED (no executable $exe or no seed corpus $corpus)"
        failed+=("$t")
        continue
    fi
    replay_log=$build/logs/$t.replay.log
    fuzz_log=$build/logs/$t.fuzz.log
    seeds=$(find "$corpus" -type f | wc -l)
    common=(-seed=1 -timeout=25 -rss_limit_mb=2048 "-artifact_prefix=$build/artifacts/$t-")
    if ! "$exe" "${common[@]}" -runs=0 "$corpus" > "$replay_log" 2>&1; then
        echo "$t: FAILED replaying the $seeds seed inputs of fuzz/corpus/$t"
        tail -n 40 "$replay_log"
        failed+=("$t")
        continue
    fi
    work=$build/work/$t
    rm -rf "$work"
    cp -r "$corpus" "$work"
    if ! "$exe" "${common[@]}" -max_total_time="$seconds" -print_final_stats=1 "$work" > "$fuzz_log" 2>&1; then
        echo "$t: FAILED while fuzzing (log: $fuzz_log)"
        grep -E "^(==[0-9]+==ERROR|SUMMARY|fuzz invariant violated|.*runtime error:)" "$fuzz_log" | head -n 5 || true
        tail -n 40 "$fuzz_log"
        failed+=("$t")
        continue
    fi
    execs=$(fstat "$fuzz_log" number_of_executed_units)
    rate=$(fstat "$fuzz_log" average_exec_per_sec)
    added=$(fstat "$fuzz_log" new_units_added)
    rss=$(fstat "$fuzz_log" peak_rss_mb)
    cov=$(field "$fuzz_log" 'DONE' cov)
    ft=$(field "$fuzz_log" 'DONE' ft)
    printf '%-26s ok: %3d seeds replayed; %s s fuzzing: %9s execs (%s/s), cov %s, ft %s, %s new inputs, %s MB\n' \
        "$t" "$seeds" "$seconds" "$execs" "$rate" "$cov" "$ft" "$added" "$rss"
done

echo "run-fuzzers: ${#targets[@]} targets, $((${#targets[@]} - ${#failed[@]})) clean, ${#failed[@]} failed, $((SECONDS - start)) s"
if [ ${#failed[@]} -ne 0 ]; then
    echo "run-fuzzers: FAILED: ${failed[*]} (inputs in $build/artifacts/, logs in $build/logs/)" >&2
    exit 1
fi
