#!/usr/bin/env bash
# Boots the siw guest peer under QEMU (TCG) with its Ethernet carried over a TCP socket
# (QEMU -netdev socket: each frame preceded by its length, 4 bytes big-endian).
#
#   tools/siw-peer/run-guest.sh --ip 10.0.0.2/24 (--listen HOST:PORT | --connect HOST:PORT)
#        --rping "ARGS" [--variant default|crc|rev1] [--mac MAC] [--neigh IP,MAC] [--wait SECONDS]
#        [--log FILE] [--pcap FILE] [--quiet] [--shell] [--timeout SECONDS]
#
# --listen makes QEMU wait for the other end (a second guest or the platform's socket bridge) to
# connect; --connect connects to an end that listens. The serial console goes to the terminal and to
# --log FILE (default $SIW_PEER_DIR/guest-<pid>.log); --quiet sends it to the log only. --pcap FILE
# records every frame crossing the guest's NIC (QEMU filter-dump). Exit status: 0 when the guest
# printed "SIW-PEER: PASS", 1 on "SIW-PEER: FAIL ..." or no verdict, 2 on bad arguments.
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

usage() { sed -n '2,14p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//' >&2; exit 2; }
VARIANT=default IP="" LISTEN="" CONNECT="" RPING="" MAC="52:54:00:00:00:02" NEIGH="" WAIT=120
LOG="" PCAP="" QUIET=0 SHELL_AT_END=0 TIMEOUT=300
while [ $# -gt 0 ]; do
    case "$1" in
        --variant) VARIANT="$2"; shift 2 ;;
        --ip) IP="$2"; shift 2 ;;
        --listen) LISTEN="$2"; shift 2 ;;
        --connect) CONNECT="$2"; shift 2 ;;
        --rping) RPING="$2"; shift 2 ;;
        --mac) MAC="$2"; shift 2 ;;
        --neigh) NEIGH="$2"; shift 2 ;;
        --wait) WAIT="$2"; shift 2 ;;
        --log) LOG="$2"; shift 2 ;;
        --pcap) PCAP="$2"; shift 2 ;;
        --quiet) QUIET=1; shift ;;
        --shell) SHELL_AT_END=1; shift ;;
        --timeout) TIMEOUT="$2"; shift 2 ;;
        -h|--help) usage ;;
        *) echo "run-guest.sh: unknown argument '$1'" >&2; usage ;;
    esac
done
siw_check_variant "$VARIANT"
[ -n "$IP" ] || { echo "run-guest.sh: --ip ADDR/PREFIX is required" >&2; exit 2; }
[ -n "$RPING" ] || { echo "run-guest.sh: --rping \"ARGS\" is required" >&2; exit 2; }
case "$RPING" in *\"*) echo "run-guest.sh: --rping must not contain double quotes" >&2; exit 2 ;; esac
if [ -n "$LISTEN" ] && [ -n "$CONNECT" ] || [ -z "$LISTEN$CONNECT" ]; then
    echo "run-guest.sh: give exactly one of --listen HOST:PORT and --connect HOST:PORT" >&2; exit 2
fi

KVER="$(siw_kernel_version)"
KDIR="$("$SIW_PEER_SRC/install-deps.sh")"
INITRD="$("$SIW_PEER_SRC/mkinitramfs.sh" "$VARIANT")"
mkdir -p "$SIW_PEER_DIR"
[ -n "$LOG" ] || LOG="$SIW_PEER_DIR/guest-$$.log"
: > "$LOG"

if [ -n "$LISTEN" ]; then NETDEV="socket,id=n0,listen=$LISTEN"; else NETDEV="socket,id=n0,connect=$CONNECT"; fi
APPEND="console=ttyS0 panic=-1 loglevel=5 ipv6.disable=1 peer_ip=$IP peer_rping=\"$RPING\" peer_wait=$WAIT"
[ -z "$NEIGH" ] || APPEND="$APPEND peer_neigh=$NEIGH"
[ "$SHELL_AT_END" = 0 ] || APPEND="$APPEND peer_shell=1"

ARGS=(-accel tcg -cpu max -m 512 -smp 1 -nographic -no-reboot -monitor none
      -kernel "$KDIR/boot/vmlinuz-$KVER" -initrd "$INITRD" -append "$APPEND"
      -netdev "$NETDEV" -device "virtio-net-pci,netdev=n0,mac=$MAC,romfile=")
[ -z "$PCAP" ] || ARGS+=(-object "filter-dump,id=dump0,netdev=n0,file=$PCAP")
if [ "$QUIET" = 1 ]; then
    ARGS+=(-serial "file:$LOG")
else
    ARGS+=(-chardev "stdio,id=con0,logfile=$LOG,signal=off" -serial chardev:con0)
fi

siw_log "booting $VARIANT guest $IP ($NETDEV), console log $LOG"
start=$(date +%s.%N)
status=0
if [ "$QUIET" = 1 ]; then
    timeout "$TIMEOUT" qemu-system-x86_64 "${ARGS[@]}" < /dev/null || status=$?
else
    timeout --foreground "$TIMEOUT" qemu-system-x86_64 "${ARGS[@]}" || status=$?
fi
end=$(date +%s.%N)
secs="$(printf '%.1f' "$(echo "$end - $start" | bc)")"
[ "$status" != 124 ] || echo "SIW-PEER: FAIL QEMU still running after ${TIMEOUT}s, killed" >> "$LOG"
if grep -q '^SIW-PEER: PASS' "$LOG"; then
    siw_log "PASS after $secs s ($LOG)"
    exit 0
fi
siw_log "$(grep -m1 '^SIW-PEER: FAIL' "$LOG" || echo "no verdict (QEMU exit status $status)") after $secs s ($LOG)"
exit 1
