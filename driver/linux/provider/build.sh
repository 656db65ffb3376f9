#!/usr/bin/env bash
# Builds librnic-rdmav34.so, the libibverbs provider of the modelled RNIC (rnic_verbs.c), against
# rdma-core's own source headers: Debian's libibverbs-dev ships no provider interface
# (infiniband/driver.h, kern-abi.h), and the provider ABI is private (symbol version
# IBVERBS_PRIVATE_34 of Debian bookworm's libibverbs1 44.0), so the headers must describe that very
# ABI. They come from `apt-get source rdma-core` (deb-src of the host's own Debian sources, enabled
# for this call only, in a private apt state under OUT); where the mirror has no orig tarball for
# 44.0 (this machine's: 404), from the next Debian release's rdma-core if its provider ABI is still
# the same (checked); or from RDMA_CORE_SRC (a tree with that ABI). The generated headers
# rdma-core's CMake would make are made here: kernel-abi/ (buildlib/make_abi_structs.py) and a
# config.h with the values the provider headers read.
#   driver/linux/provider/build.sh [OUT]      prints the path of the .so; exit 3 when no source
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REPO="$(cd "$HERE/../../.." && pwd)"
OUT="${1:-$REPO/build/rnic-guest/provider}"
PABI=34
mkdir -p "$OUT"
die() { echo "provider/build.sh: $1" >&2; exit "${2:-1}"; }

# The installed libibverbs must be the one whose private ABI the headers describe.
LIBIBVERBS="$(ldconfig -p | awk '/libibverbs\.so\.1 .*x86-64/ && !found { print $NF; found = 1 }')"
[ -n "$LIBIBVERBS" ] || die "libibverbs.so.1 is not installed (apt-get install libibverbs1)" 3
objdump -T "$LIBIBVERBS" | grep -c "IBVERBS_PRIVATE_$PABI" > /dev/null ||
    die "$LIBIBVERBS does not export IBVERBS_PRIVATE_$PABI: not rdma-core 44" 3

SRC="${RDMA_CORE_SRC:-}"
if [ -z "$SRC" ]; then
    SRC="$(ls -d "$OUT"/rdma-core-*/ 2> /dev/null | head -n 1 || true)"
    SRC="${SRC%/}"
    if [ -z "$SRC" ] || [ ! -f "$SRC/libibverbs/driver.h" ]; then
        APT="$OUT/apt"
        mkdir -p "$APT/parts" "$APT/lists/partial"
        for f in /etc/apt/sources.list.d/*.sources; do
            [ -e "$f" ] && sed 's/^Types: deb$/Types: deb-src/' "$f" > "$APT/parts/$(basename "$f")"
        done
        for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
            [ -e "$f" ] && sed -n 's/^deb /deb-src /p' "$f" > "$APT/parts/$(basename "$f")"
        done
        opts=(-o Dir::Etc::SourceList=/dev/null -o "Dir::Etc::SourceParts=$APT/parts"
              -o "Dir::State::Lists=$APT/lists" -o APT::Sandbox::User=root -q)
        fetched=no
        if (apt-get "${opts[@]}" update > "$OUT/apt.log" 2>&1 &&
            cd "$OUT" && apt-get "${opts[@]}" --only-source source rdma-core=44.0-2 >> "$OUT/apt.log" 2>&1); then
            fetched=yes
        else
            # Some mirrors keep bookworm's .dsc but not its orig tarball. The provider ABI is what must
            # match, not the release: a later Debian rdma-core whose IBVERBS_PABI_VERSION is still
            # $PABI (checked below) declares the same private interface. Its source comes from the
            # next Debian release's deb-src, added to this private apt state only.
            uri="$(sed -n 's/^URIs: \(http[^ ]*\/debian\)$/\1/p' /etc/apt/sources.list.d/*.sources 2> /dev/null | head -n 1)"
            [ -n "$uri" ] || uri="$(sed -n 's/^deb \[*[^]]*\]* *\(http[^ ]*\/debian\) .*/\1/p' /etc/apt/sources.list 2> /dev/null | head -n 1)"
            [ -n "$uri" ] || uri="http://deb.debian.org/debian"
            printf 'Types: deb-src\nURIs: %s\nSuites: trixie\nComponents: main\nSigned-By: /usr/share/keyrings/debian-archive-keyring.gpg\n' \
                "$uri" > "$APT/parts/rnic-provider-trixie.sources"
            if (apt-get "${opts[@]}" update >> "$OUT/apt.log" 2>&1 &&
                cd "$OUT" && apt-get "${opts[@]}" --only-source source rdma-core/trixie >> "$OUT/apt.log" 2>&1); then
                fetched=yes
            fi
        fi
        # apt checks every file it fetches against the signed Sources index; when the mirror lacks
        # the .dsc alone, the verified orig tarball it did fetch holds all the headers needed.
        if [ "$fetched" = no ]; then
            orig="$(ls "$OUT"/rdma-core_*.orig.tar.gz 2> /dev/null | sort -V | tail -n 1 || true)"
            [ -n "$orig" ] && tar -xzf "$orig" -C "$OUT" && fetched=yes
        fi
        [ "$fetched" = yes ] ||
            die "apt-get source rdma-core failed (log $OUT/apt.log); set RDMA_CORE_SRC to an rdma-core tree with provider ABI $PABI" 3
        SRC="$(ls -d "$OUT"/rdma-core-*/ 2> /dev/null | head -n 1 || true)"
        SRC="${SRC%/}"
        [ -n "$SRC" ] && [ -f "$SRC/libibverbs/driver.h" ] ||
            die "apt-get source gave no rdma-core-*/libibverbs/driver.h under $OUT (dpkg-dev unpacks the source)" 3
    fi
fi
grep -q 'IBVERBS_PABI_VERSION "'$PABI'"' "$SRC/CMakeLists.txt" ||
    die "$SRC is not rdma-core with provider ABI $PABI" 3

INC="$OUT/include"
rm -rf "$INC"
mkdir -p "$INC/infiniband" "$INC/kernel-abi"
cp "$SRC"/libibverbs/*.h "$INC/infiniband/"
cp -r "$SRC/kernel-headers/rdma" "$INC/rdma"
cp "$SRC/kernel-headers/rdma/ib_user_ioctl_verbs.h" "$INC/infiniband/"  # installed there by rdma-core
cp -r "$SRC/ccan" "$INC/ccan"
cp -r "$SRC/util" "$INC/util"
for h in ib_user_verbs rdma_user_ioctl_cmds ib_user_ioctl_verbs; do
    [ -f "$INC/rdma/$h.h" ] && python3 "$SRC/buildlib/make_abi_structs.py" "$INC/rdma/$h.h" "$INC/kernel-abi/$h.h"
done
# What rdma-core's CMake writes into config.h and the provider headers read (buildlib/config.h.in).
cat > "$INC/config.h" <<CFG
#ifndef RNIC_PROVIDER_CONFIG_H
#define RNIC_PROVIDER_CONFIG_H
#define HAVE_STATEMENT_EXPR 1
#define HAVE_BUILTIN_TYPES_COMPATIBLE_P 1
#define HAVE_TYPEOF 1
#define HAVE_ISBLANK 1
#define HAVE_BUILTIN_CLZ 1
#define HAVE_BUILTIN_CLZL 1
#define HAVE_FUNC_ATTRIBUTE_ALWAYS_INLINE 1
#define HAVE_FUNC_ATTRIBUTE_SYMVER 1
#define HAVE_FULL_SYMBOL_VERSIONS 1
#define STREAM_CLOEXEC "e"
#define RDMA_CDEV_DIR "/dev/infiniband"
#define IBV_CONFIG_DIR "/etc/libibverbs.d"
#define VERBS_PROVIDER_SUFFIX "-rdmav$PABI.so"
#define IBVERBS_PABI_VERSION $PABI
#define SIZEOF_LONG 8
#define VERBS_IOCTL_ONLY 0
#define VERBS_WRITE_ONLY 0
#endif
CFG
SO="$OUT/librnic-rdmav$PABI.so"
gcc -shared -fPIC -O2 -g -Wall -Wextra -Werror -Wno-unused-parameter -Wno-missing-field-initializers \
    -std=gnu11 -I"$INC" -I"$HERE/.." -o "$SO.tmp" "$HERE/rnic_verbs.c" "$LIBIBVERBS" -Wl,-z,defs -lpthread ||
    die "building $HERE/rnic_verbs.c failed"
mv "$SO.tmp" "$SO"
echo "$SO"
