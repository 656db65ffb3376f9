#!/usr/bin/env bash
# Builds siw.ko for the guest kernel as an out-of-tree module from Debian's linux-source-6.1.
#   tools/siw-peer/build-siw.sh [default|crc|rev1]      (prints the path of siw.ko)
# Variants patch siw's compile-time policy constants in siw_main.c:
#   default  MPA revision 2, CRC off unless the peer asks for it (siw as Debian would ship it)
#   crc      mpa_crc_required = true: siw asks for CRC in its MPA Request/Reply
#   rev1     mpa_version = MPA_REVISION_1: MPA revision 1 (no RFC 6581 enhanced connection set-up)
# Results are cached under $SIW_PEER_DIR/siw-<kernel>-<variant>/; a rebuild happens only when the
# kernel version or this script changes.
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
VARIANT="${1:-default}"
siw_check_variant "$VARIANT"

KVER="$(siw_kernel_version)"
HDRS="/usr/src/linux-headers-$KVER"
[ -d "$HDRS" ] || siw_die "$HDRS missing: run tools/siw-peer/install-deps.sh"
SRC_TAR="$(ls /usr/src/linux-source-6.1.tar.* 2>/dev/null | head -n1)"
[ -n "$SRC_TAR" ] || siw_die "/usr/src/linux-source-6.1.tar.* missing: run tools/siw-peer/install-deps.sh"

OUT="$SIW_PEER_DIR/siw-$KVER-$VARIANT"
STAMP="$( (cat "${BASH_SOURCE[0]}"; stat -c "%s %Y" "$SRC_TAR") | sha256sum | cut -c1-16)"
if [ -f "$OUT/siw.ko" ] && [ "$(cat "$OUT/.stamp" 2>/dev/null)" = "$STAMP" ]; then
    echo "$OUT/siw.ko"
    exit 0
fi

# The pristine siw sources, extracted once from the (large) source tarball.
PRISTINE="$SIW_PEER_DIR/siw-src-6.1"
if [ ! -f "$PRISTINE/.done" ]; then
    siw_log "extracting drivers/infiniband/sw/siw from $SRC_TAR"
    rm -rf "$PRISTINE"
    mkdir -p "$PRISTINE"
    tar -xf "$SRC_TAR" -C "$PRISTINE" --strip-components=5 --wildcards 'linux-source-6.1/drivers/infiniband/sw/siw/*'
    [ -f "$PRISTINE/siw_main.c" ] || siw_die "siw sources not found in $SRC_TAR"
    touch "$PRISTINE/.done"
fi

rm -rf "$OUT"
mkdir -p "$OUT/src"
cp "$PRISTINE"/*.c "$PRISTINE"/*.h "$PRISTINE"/Makefile "$OUT/src/"
MAIN="$OUT/src/siw_main.c"
# The policy constants, e.g. "const bool mpa_crc_required;" and "u_char mpa_version = MPA_REVISION_2;"
patch_const() {  # pattern, replacement, what
    grep -Eq "$1" "$MAIN" || siw_die "siw_main.c: cannot find $3 (pattern $1): has the kernel source changed?"
    sed -E -i "s/$1/$2/" "$MAIN"
    grep -Eq "$2" "$MAIN" || siw_die "siw_main.c: patching $3 failed"
}
case "$VARIANT" in
    default) ;;
    crc) patch_const '^(const )?bool mpa_crc_required( = false)?;' 'const bool mpa_crc_required = true;' \
                     'mpa_crc_required' ;;
    rev1) patch_const '^u_char mpa_version = MPA_REVISION_2;' 'u_char mpa_version = MPA_REVISION_1;' \
                      'mpa_version' ;;
esac
diff -u "$PRISTINE/siw_main.c" "$MAIN" > "$OUT/variant.patch" || true

siw_log "building siw.ko ($VARIANT) for $KVER"
start=$(date +%s.%N)
make -s -C "$HDRS" M="$OUT/src" CONFIG_RDMA_SIW=m modules > "$OUT/build.log" 2>&1 ||
    { tail -n 30 "$OUT/build.log" >&2; siw_die "module build failed (log: $OUT/build.log)"; }
end=$(date +%s.%N)
cp "$OUT/src/siw.ko" "$OUT/siw.ko"
modinfo -F vermagic "$OUT/siw.ko" | grep -q "^$KVER " || siw_die "siw.ko vermagic does not match $KVER"
printf '%.1f\n' "$(echo "$end - $start" | bc)" > "$OUT/build-seconds"
siw_log "built $OUT/siw.ko in $(cat "$OUT/build-seconds") s"
echo "$STAMP" > "$OUT/.stamp"
echo "$OUT/siw.ko"
