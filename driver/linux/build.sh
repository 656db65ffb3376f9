#!/usr/bin/env bash
# Builds rnic.ko for the guest kernel (Debian's linux-headers of the version the siw guest runs, as
# tools/siw-peer/build-siw.sh builds siw.ko), out of tree, in OUT (default build/rnic-guest/module):
# It also builds the kernel consumer rnic_kping.ko (driver/linux/tools/rnic_kping_main.c, the client
# modes, and rnic_kping_server.c, the server mode) into OUT/kping.
#   driver/linux/build.sh [OUT]        prints the path of rnic.ko
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REPO="$(cd "$HERE/../.." && pwd)"
source "$REPO/tools/siw-peer/common.sh"
KVER="$(siw_kernel_version)"
HDRS="/usr/src/linux-headers-$KVER"
[ -d "$HDRS" ] || siw_die "$HDRS missing: run tools/siw-peer/install-deps.sh"
OUT="${1:-$REPO/build/rnic-guest/module}"
mkdir -p "$OUT"
cp "$HERE/Kbuild" "$HERE"/*.c "$HERE"/*.h "$OUT/"
make -s -C "$HDRS" M="$OUT" modules > "$OUT/build.log" 2>&1 ||
    { cat "$OUT/build.log" >&2; siw_die "rnic.ko build failed (log: $OUT/build.log)"; }
# Warnings are errors (-Werror); the log must not hold any either.
if grep -q "warning:" "$OUT/build.log"; then cat "$OUT/build.log" >&2; siw_die "rnic.ko built with warnings"; fi
[ -f "$OUT/rnic.ko" ] || siw_die "no rnic.ko in $OUT"
mkdir -p "$OUT/kping"
cp "$HERE/tools/rnic_kping.h" "$HERE/tools/rnic_kping_main.c" "$HERE/tools/rnic_kping_server.c" "$OUT/kping/"
printf 'obj-m := rnic_kping.o\nrnic_kping-y := rnic_kping_main.o rnic_kping_server.o\nccflags-y := -Werror\n' > "$OUT/kping/Kbuild"
make -s -C "$HDRS" M="$OUT/kping" modules > "$OUT/kping/build.log" 2>&1 ||
    { cat "$OUT/kping/build.log" >&2; siw_die "rnic_kping.ko build failed (log: $OUT/kping/build.log)"; }
if grep -q "warning:" "$OUT/kping/build.log"; then cat "$OUT/kping/build.log" >&2; siw_die "rnic_kping.ko built with warnings"; fi
[ -f "$OUT/kping/rnic_kping.ko" ] || siw_die "no rnic_kping.ko in $OUT/kping"
echo "$OUT/rnic.ko"
