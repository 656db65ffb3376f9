#!/usr/bin/env bash
# Installs the Debian packages the siw guest peer is built from, and unpacks (without installing)
# the guest kernel image package into $SIW_PEER_DIR/kernel-<version>/. Does nothing when all is there.
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

# Host side: kernel source and build tooling for the out-of-tree siw.ko, QEMU, and the guest's
# user space (copied from the host's files into the initramfs).
# ibverbs-utils: ibv_devinfo for the RNIC guest's rdma-core test (driver/linux/guest/mkinitramfs.sh).
PKGS="linux-source-6.1 linux-headers-amd64 linux-kbuild-6.1 linux-compiler-gcc-12-x86 gcc-12 make
      qemu-system-x86 busybox-static rdmacm-utils ibverbs-providers ibverbs-utils libibverbs1 librdmacm1
      libnl-3-200 libnl-route-3-200 iproute2 cpio kmod xz-utils gzip"

missing=""
for p in $PKGS; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
if [ -n "$missing" ]; then
    siw_log "installing:$missing"
    SUDO=""
    [ "$(id -u)" -eq 0 ] || SUDO="sudo"
    $SUDO apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends $missing >/dev/null
fi

# The guest kernel: unpacked from its .deb (installing it would run the host's initramfs hooks).
KVER="$(siw_kernel_version)"
KDIR="$SIW_PEER_DIR/kernel-$KVER"
if [ ! -f "$KDIR/.done" ]; then
    mkdir -p "$SIW_PEER_DIR/debs"
    rm -rf "$KDIR"
    siw_log "downloading linux-image-$KVER"
    (cd "$SIW_PEER_DIR/debs" && apt-get download -q -o APT::Sandbox::User=root "linux-image-$KVER" >/dev/null) ||
        siw_die "apt-get download linux-image-$KVER failed"
    deb="$(ls -t "$SIW_PEER_DIR/debs/linux-image-${KVER}_"*.deb | head -n1)"
    dpkg-deb -x "$deb" "$KDIR"
    [ -f "$KDIR/boot/vmlinuz-$KVER" ] || siw_die "$deb has no boot/vmlinuz-$KVER"
    touch "$KDIR/.done"
fi
echo "$KDIR"
