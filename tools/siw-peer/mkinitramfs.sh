#!/usr/bin/env bash
# Assembles the guest's initramfs: busybox, rping, the rdma tool, libibverbs/librdmacm with the siw
# provider, the kernel modules (in load order) and siw.ko of the chosen variant; /init is init.sh.
#   tools/siw-peer/mkinitramfs.sh [default|crc|rev1]      (prints the path of the .cpio.gz)
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
source "$(dirname "${BASH_SOURCE[0]}")/guest_libs.sh"
VARIANT="${1:-default}"
siw_check_variant "$VARIANT"
KVER="$(siw_kernel_version)"
KDIR="$("$SIW_PEER_SRC/install-deps.sh")"
SIW_KO="$("$SIW_PEER_SRC/build-siw.sh" "$VARIANT")"
OUT="$SIW_PEER_DIR/initramfs-$KVER-$VARIANT.cpio.gz"
if [ -f "$OUT" ] && [ "$OUT" -nt "$SIW_KO" ] && [ "$OUT" -nt "$SIW_PEER_SRC/init.sh" ] &&
   [ "$OUT" -nt "${BASH_SOURCE[0]}" ] && [ "$OUT" -nt "$SIW_PEER_SRC/guest_libs.sh" ]; then
    echo "$OUT"
    exit 0
fi

# Module load order from the kernel's own dependency data: depmod over the unpacked image with
# siw.ko added, then modprobe --show-depends for each module the guest needs.
MODROOT="$SIW_PEER_DIR/modroot-$KVER"
if [ ! -f "$MODROOT/.done" ]; then
    rm -rf "$MODROOT"
    mkdir -p "$MODROOT/lib/modules"
    cp -a "$KDIR/lib/modules/$KVER" "$MODROOT/lib/modules/"
    mkdir -p "$MODROOT/lib/modules/$KVER/extra"
    cp "$SIW_KO" "$MODROOT/lib/modules/$KVER/extra/siw.ko"
    depmod -b "$MODROOT" "$KVER"
    touch "$MODROOT/.done"
fi
# crc32c_generic first: libcrc32c asks the crypto API for "crc32c" at load time and the guest has no
# modprobe for the kernel to call.
ORDER=""
for m in crc32c_generic virtio_pci virtio_net siw rdma_ucm ib_uverbs; do
    deps="$(modprobe -d "$MODROOT" -S "$KVER" --show-depends "$m" | awk '$1 == "insmod" { print $2 }')" ||
        siw_die "modprobe --show-depends $m failed"
    for d in $deps; do
        rel="${d#"$MODROOT/lib/modules/$KVER/"}"
        case " $ORDER " in *" $rel "*) ;; *) ORDER="$ORDER $rel" ;; esac
    done
done

STAGE="$(mktemp -d "$SIW_PEER_DIR/stage.XXXXXX")"
trap 'rm -rf "$STAGE"' EXIT
mkdir -p "$STAGE"/{bin,sbin,usr/bin,usr/sbin,lib,lib64,etc/siw-peer,proc,sys,dev,tmp,run}
cp /bin/busybox "$STAGE/bin/busybox"
for applet in $("$STAGE/bin/busybox" --list); do
    [ -e "$STAGE/bin/$applet" ] || ln -s busybox "$STAGE/bin/$applet"
done
rm -f "$STAGE/bin/ip"  # busybox ip is enough, but keep one: iproute2's ip is not copied
ln -s busybox "$STAGE/bin/ip"

# Dynamic binaries and every library they (and the dlopen'ed siw provider) need, at the same paths
# (guest_copy_with_libs, guest_libs.sh).
PROVIDER="$(dpkg -L ibverbs-providers | awk '/\/libsiw-rdmav[0-9]*\.so$/ && !found { print; found = 1 }')"
[ -n "$PROVIDER" ] || siw_die "the siw provider of ibverbs-providers is not installed"
guest_copy_with_libs "$STAGE" /usr/bin/rping /usr/bin/rdma "$PROVIDER"
# glibc dlopens libgcc_s for pthread_exit/pthread_cancel (rping's threads): not in any ldd output.
LIBGCC="$(ldconfig -p | awk '/libgcc_s\.so\.1 .*x86-64/ && !found { print $NF; found = 1 }')"
[ -n "$LIBGCC" ] || siw_die "libgcc_s.so.1 not found"
guest_copy_with_libs "$STAGE" "$LIBGCC"
mkdir -p "$STAGE/etc/libibverbs.d"
cp /etc/libibverbs.d/siw.driver "$STAGE/etc/libibverbs.d/"

mkdir -p "$STAGE/lib/modules"
for rel in $ORDER; do
    if [ "$rel" = extra/siw.ko ]; then src="$SIW_KO"; else src="$KDIR/lib/modules/$KVER/$rel"; fi
    mkdir -p "$STAGE/lib/modules/$(dirname "$rel")"
    cp "$src" "$STAGE/lib/modules/$rel"
    echo "$rel" >> "$STAGE/etc/siw-peer/modules.order"
done
echo "$VARIANT" > "$STAGE/etc/siw-peer/variant"
cp "$SIW_PEER_SRC/init.sh" "$STAGE/init"
chmod +x "$STAGE/init"

(cd "$STAGE" && find . -print0 | cpio --null -o -H newc --quiet | gzip -1) > "$OUT.tmp"
mv "$OUT.tmp" "$OUT"
siw_log "initramfs $OUT ($(du -k "$OUT" | cut -f1) KiB; modules:$ORDER)"
echo "$OUT"
