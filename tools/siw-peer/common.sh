# Shared settings of the siw-peer scripts (sourced, not run).
# SIW_PEER_DIR: where everything built is cached (siw.ko per variant, the guest kernel, initramfs).
set -euo pipefail

SIW_PEER_SRC="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
SIW_PEER_REPO="$(cd "$SIW_PEER_SRC/../.." && pwd)"
SIW_PEER_DIR="${SIW_PEER_DIR:-$SIW_PEER_REPO/build/siw-peer}"
SIW_VARIANTS="default crc rev1"

siw_log() { echo "siw-peer: $*" >&2; }
siw_die() { echo "siw-peer: error: $*" >&2; exit 1; }
# A command that fails without siw_die (set -e) still says which one and where.
set -E
trap 'echo "siw-peer: error: \"$BASH_COMMAND\" failed (status $?) at ${BASH_SOURCE[0]:-?}:$LINENO" >&2' ERR

siw_check_variant() {
    case "$1" in
        default|crc|rev1) ;;
        *) siw_die "unknown variant '$1' (expected one of: $SIW_VARIANTS)" ;;
    esac
}

# The Debian kernel ABI the guest runs, e.g. 6.1.0-56-amd64: the one linux-headers-amd64 depends on
# (after install-deps.sh), so that headers, image and the built siw.ko always agree.
siw_kernel_version() {
    local dep
    dep="$(dpkg-query -W -f='${Depends}' linux-headers-amd64 2>/dev/null | grep -o 'linux-headers-[0-9][^ ,]*-amd64' | awk 'NR == 1')" ||
        true
    [ -n "$dep" ] || siw_die "linux-headers-amd64 is not installed: run tools/siw-peer/install-deps.sh"
    echo "${dep#linux-headers-}"
}
