#!/usr/bin/env bash
# Builds the RNIC driver guest from Debian packages (the siw guest's kernel image and headers:
# tools/siw-peer/install-deps.sh): rnic.ko and the kernel consumer rnic_kping.ko for the guest kernel
# (driver/linux/build.sh), the kernel's RDMA core modules rnic.ko and rnic_kping.ko need (ib_core,
# iw_cm, ib_cm, rdma_cm and what they depend on, from the Debian linux-image, in the order depmod
# gives), the static user-space tools rnic_rping and rnic_perf (driver/linux/tools/), busybox and
# init.sh in an initramfs. With rdma-core's user space too (issue 16 point 5): rnic.ko's libibverbs
# provider librnic-rdmav34.so (driver/linux/provider/build.sh, against rdma-core 44's source headers)
# with /etc/libibverbs.d/rnic.driver, Debian's rping and ibv_devinfo (rdmacm-utils, ibverbs-utils, as
# installed on this Debian bookworm host by tools/siw-peer/install-deps.sh) with every shared library
# they and the provider need (ldd), and the module rdma_ucm (modules.uverbs, loaded by init.sh only
# when rdma-core runs; ib_uverbs is in the RDMA core's order, since rnic.ko needs its ib_umem_get). Without rdma-core's source the image is built without them and
# /etc/rnic-guest/no-rdma-core says why. Outputs in RNIC_GUEST_DIR (default build/rnic-guest); the kernel comes
# from SIW_PEER_DIR (default build/siw-peer, shared with the siw guest).
#   driver/linux/guest/mkinitramfs.sh     prints "KERNEL INITRAMFS"
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REPO="$(cd "$HERE/../../.." && pwd)"
source "$REPO/tools/siw-peer/common.sh"
source "$REPO/tools/siw-peer/guest_libs.sh"
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
# The provider (exit 3 from build.sh: no rdma-core 44 source here; the image is built without it).
PROVIDER=""
PROVIDER_WHY=""
if out="$("$HERE/../provider/build.sh" "$OUTDIR/provider" 2>&1)"; then
    PROVIDER="$(echo "$out" | tail -n1)"
else
    PROVIDER_WHY="$(echo "$out" | tail -n1)"
fi
# Load order of the RDMA core from the kernel's own dependency data: depmod over a hard-linked copy
# of the unpacked image's modules, then modprobe --show-depends for the top of what is needed.
MODROOT="$OUTDIR/modroot-$KVER"
if [ ! -f "$MODROOT/.done" ]; then
    rm -rf "$MODROOT"
    mkdir -p "$MODROOT/lib/modules"
    cp -al "$KDIR/lib/modules/$KVER" "$MODROOT/lib/modules/" 2>/dev/null || cp -a "$KDIR/lib/modules/$KVER" "$MODROOT/lib/modules/"
    depmod -b "$MODROOT" "$KVER"
    touch "$MODROOT/.done"
fi
ORDER=""
# ib_uverbs always: rnic.ko's reg_user_mr pins pages with ib_umem_get, which ib_uverbs.ko holds.
for m in rdma_cm ib_uverbs; do
    deps="$(modprobe -d "$MODROOT" -S "$KVER" --show-depends "$m" | awk '$1 == "insmod" { print $2 }')" ||
        siw_die "modprobe --show-depends $m failed"
    for d in $deps; do
        rel="${d#"$MODROOT/lib/modules/$KVER/"}"
        case " $ORDER " in *" $rel "*) ;; *) ORDER="$ORDER $rel" ;; esac
    done
done
UVERBS=""
for m in rdma_ucm; do
    deps="$(modprobe -d "$MODROOT" -S "$KVER" --show-depends "$m" | awk '$1 == "insmod" { print $2 }')" ||
        siw_die "modprobe --show-depends $m failed"
    for d in $deps; do
        rel="${d#"$MODROOT/lib/modules/$KVER/"}"
        case " $ORDER $UVERBS " in *" $rel "*) ;; *) UVERBS="$UVERBS $rel" ;; esac
    done
done
OUT="$OUTDIR/initramfs-$KVER.cpio.gz"
STAGE="$(mktemp -d "$OUTDIR/stage.XXXXXX")"
trap 'rm -rf "$STAGE"' EXIT
mkdir -p "$STAGE"/{bin,sbin,proc,sys,dev,tmp,etc/rnic-guest}
for rel in $ORDER; do
    mkdir -p "$STAGE/lib/modules/$(dirname "$rel")"
    cp "$KDIR/lib/modules/$KVER/$rel" "$STAGE/lib/modules/$rel"
    echo "$rel" >> "$STAGE/etc/rnic-guest/modules.order"
done
for rel in $UVERBS; do
    mkdir -p "$STAGE/lib/modules/$(dirname "$rel")"
    cp "$KDIR/lib/modules/$KVER/$rel" "$STAGE/lib/modules/$rel"
    echo "$rel" >> "$STAGE/etc/rnic-guest/modules.uverbs"
done
cp /bin/busybox "$STAGE/bin/busybox"
for applet in $("$STAGE/bin/busybox" --list); do
    [ -e "$STAGE/bin/$applet" ] || ln -s busybox "$STAGE/bin/$applet"
done
cp "$KO" "$STAGE/rnic.ko"
cp "$(dirname "$KO")/kping/rnic_kping.ko" "$STAGE/rnic_kping.ko"
cp "$OUTDIR/tools/rnic_rping" "$OUTDIR/tools/rnic_perf" "$STAGE/bin/"
# rdma-core's user space at the host's paths, with the libraries each needs (guest_copy_libs,
# tools/siw-peer/guest_libs.sh; and glibc's dlopened libgcc_s for rping's threads, which no ldd
# output names).
if [ -n "$PROVIDER" ]; then
    PDIR="$(dirname "$(dpkg -L ibverbs-providers | awk '/\/libsiw-rdmav[0-9]*\.so$/ && !found { print; found = 1 }')")"
    [ -d "$PDIR" ] || siw_die "libibverbs' provider directory not found (ibverbs-providers)"
    mkdir -p "$STAGE$PDIR" "$STAGE/etc/libibverbs.d"
    cp "$PROVIDER" "$STAGE$PDIR/"
    echo "driver rnic" > "$STAGE/etc/libibverbs.d/rnic.driver"
    LIBGCC="$(ldconfig -p | awk '/libgcc_s\.so\.1 .*x86-64/ && !found { print $NF; found = 1 }')"
    for f in /usr/bin/rping /usr/bin/ibv_devinfo $LIBGCC; do
        mkdir -p "$STAGE$(dirname "$f")"
        cp -L "$f" "$STAGE$f"
    done
    guest_copy_libs "$STAGE" /usr/bin/rping /usr/bin/ibv_devinfo "$PROVIDER" $LIBGCC
else
    echo "$PROVIDER_WHY" > "$STAGE/etc/rnic-guest/no-rdma-core"
fi
cp "$HERE/init.sh" "$STAGE/init"
chmod +x "$STAGE/init"
(cd "$STAGE" && find . | cpio -o -H newc --quiet | gzip -1 > "$OUT.tmp")
mv "$OUT.tmp" "$OUT"
echo "$KDIR/boot/vmlinuz-$KVER $OUT"
