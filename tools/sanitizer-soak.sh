#!/usr/bin/env bash
# A short soak (tools/soak.sh) and the leak check of connect/disconnect cycles (tools/leak-check.sh)
# on an rnic-sim built with AddressSanitizer, UndefinedBehaviorSanitizer and LeakSanitizer
# (docs/reliability.md, "Soak"). The sanitizer build is a second build directory
# holding only rnic-sim and the libraries it needs, at -O1.
#   tools/sanitizer-soak.sh [--build-only | --soak-only] [BUILD_DIR] [SECONDS]
# BUILD_DIR defaults to build-asan, SECONDS (the soak's budget) to 60. Any sanitizer report makes
# rnic-sim exit non-zero (halt_on_error, -fno-sanitize-recover), which fails the soak.
set -euo pipefail
cd "$(dirname "$0")/.."
build=1 soak=1
case "${1:-}" in
  --build-only) soak=0; shift ;;
  --soak-only) build=0; shift ;;
esac
dir=${1:-build-asan} seconds=${2:-60}
flags="-fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer"
if [ $build -eq 1 ]; then
  launcher=()
  command -v ccache > /dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
  start=$(date +%s)
  cmake -S . -B "$dir" -DCMAKE_BUILD_TYPE=RelWithDebInfo "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 -g" \
    "-DCMAKE_CXX_FLAGS=$flags" "-DCMAKE_EXE_LINKER_FLAGS=-fsanitize=address,undefined" -DRNIC_TEST_AREAS= \
    "${launcher[@]}" > "$dir.configure.log" 2>&1 || { cat "$dir.configure.log"; exit 1; }
  cmake --build "$dir" -j "${JOBS:-2}" --target rnic-sim
  echo "sanitizer build of rnic-sim: $(( $(date +%s) - start )) s"
fi
if [ $soak -eq 1 ]; then
  export ASAN_OPTIONS=detect_leaks=1:halt_on_error=1:abort_on_error=0
  export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
  tools/soak.sh -b "$dir/bin/rnic-sim" -t "$seconds" -i 60 -e 10
  # Connect/disconnect cycles leave no device object behind, and LeakSanitizer no heap block.
  tools/leak-check.sh -b "$dir/bin/rnic-sim" -e 2000
fi
