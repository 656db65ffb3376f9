# Shell functions shared by the guests' initramfs builders (sourced, not run):
# tools/siw-peer/mkinitramfs.sh (the siw peer) and driver/linux/guest/mkinitramfs.sh (the RNIC guest).

# guest_copy_libs STAGE FILE...: every shared library each FILE needs (ldd: the "=> path" ones and
# the dynamic loader), copied into the staging tree STAGE at its host path, once.
guest_copy_libs() {
    local stage="$1" f lib
    shift
    for f in "$@"; do
        for lib in $(ldd "$f" | awk '/=>/ { print $3 } /^\t\/lib/ { print $1 }'); do
            [ -e "$stage$lib" ] && continue
            mkdir -p "$stage$(dirname "$lib")"
            cp -L "$lib" "$stage$lib"
        done
    done
}

# guest_copy_with_libs STAGE FILE...: each FILE itself at its host path, then its libraries.
guest_copy_with_libs() {
    local stage="$1" f
    shift
    for f in "$@"; do
        mkdir -p "$stage$(dirname "$f")"
        cp -L "$f" "$stage$f"
        guest_copy_libs "$stage" "$f"
    done
}
