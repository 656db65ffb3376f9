#!/usr/bin/env bash
# Builds the RNIC driver guest from Debian packages (the siw guest's kernel image and headers:
# tools/siw-peer/install-deps.sh): rnic.ko for the guest kernel (driver/linux/build.sh), the static
# user-space tools rnic_rping and rnic_perf (driver/linux/tools/), busybox and init.sh in an initramfs. Outputs in RNIC_GUEST_DIR (default build/rnic-guest); the kernel comes
# from SIW_PEER_DIR (default build/siw-peer, shared with the siw guest).
#   driver/linux/guest/mkinitramfs.sh     prints "KERNEL INITRAMFS"
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REPO="$(cd "$HERE/../../.." && pwd)"
source "$REPO/tools/siw-peer/common.sh"
OUTDIR="${RNIC_GUEST_DIR:-$REPO/build/rnic-guest}"
mkdir -p "$OUTDIR"
KVER="$(siw_kernel_version)"
KDIR="$("$REPO/tools/siw-peer/install-deps.sh")"
KO="$("$HERE/../build.sh" "$OUTDIR/module")"
# The user-space tool, static (the initramfs has no C library).
mkdir -p "$OUTDIR/tools"
for t in rnic_rping rnic_perf; do
    gcc -static -O2 -Wall -Wextra -Werror -o "$OUTDIR/tools/$t" "$HERE/../tools/$t.c" ||
        siw_die "building driver/linux/tools/$t.c failed"
done
OUT="$OUTDIR/initramfs-$KVER.cpio.gz"
STAGE="$(mktemp -d "$OUTDIR/stage.XXXXXX")"
trap 'rm -rf "$STAGE"' EXIT
mkdir -p "$STAGE"/{bin,sbin,proc,sys,dev,tmp}
cp /bin/busybox "$STAGE/bin/busybox"
for applet in $("$STAGE/bin/busybox" --list); do
    [ -e "$STAGE/bin/$applet" ] || ln -s busybox "$STAGE/bin/$applet"
done
cp "$KO" "$STAGE/rnic.ko"
cp "$OUTDIR/tools/rnic_rping" "$OUTDIR/tools/rnic_perf" "$STAGE/bin/"
cp "$HERE/init.sh" "$STAGE/init"
chmod +x "$STAGE/init"
(cd "$STAGE" && find . | cpio -o -H newc --quiet | gzip -1 > "$OUT.tmp")
mv "$OUT.tmp" "$OUT"
echo "$KDIR/boot/vmlinuz-$KVER $OUT"
