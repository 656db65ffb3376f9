#!/bin/sh
# /init of the siw guest peer (busybox sh). Reads its settings from the kernel command line:
#   peer_ip=ADDR/PREFIX      eth0's static IPv4 address (required)
#   peer_rping="ARGS"        the rping command line, e.g. "-s -a 0.0.0.0 -v -C 20" (required)
#   peer_neigh=IP,MAC        optional static neighbour entry (default: ARP resolves the peer)
#   peer_wait=SECONDS        rping time limit (default 120)
#   peer_shell=1             drop to a shell instead of powering off at the end
# Prints "SIW-PEER: ..." progress lines and exactly one "SIW-PEER: PASS" or "SIW-PEER: FAIL <why>",
# then powers the machine off.
export PATH=/bin:/sbin:/usr/bin:/usr/sbin
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev 2>/dev/null
mkdir -p /tmp /run
mount -t tmpfs tmpfs /tmp

finish() {
    echo "SIW-PEER: $*"
    if grep -q 'peer_shell=1' /proc/cmdline; then exec /bin/sh; fi
    sync
    poweroff -f
    sleep 5
    reboot -f
}

# Value of NAME=... on the kernel command line (a double-quoted value may contain spaces).
arg() {
    sed -n -e "s/.*[[:space:]]$1=\"\([^\"]*\)\".*/\1/p" -e "t" \
           -e "s/.*[[:space:]]$1=\([^[:space:]]*\).*/\1/p" /proc/cmdline | head -n1
}

CMDLINE=" $(cat /proc/cmdline)"
echo "$CMDLINE" > /tmp/cmdline
IP=$(sed -n -e 's/.*[[:space:]]peer_ip=\([^[:space:]]*\).*/\1/p' /tmp/cmdline)
RPING=$(sed -n -e 's/.*[[:space:]]peer_rping="\([^"]*\)".*/\1/p' /tmp/cmdline)
NEIGH=$(sed -n -e 's/.*[[:space:]]peer_neigh=\([^[:space:]]*\).*/\1/p' /tmp/cmdline)
WAIT=$(sed -n -e 's/.*[[:space:]]peer_wait=\([0-9]*\).*/\1/p' /tmp/cmdline)
[ -n "$WAIT" ] || WAIT=120
[ -n "$IP" ] || finish "FAIL no peer_ip= on the kernel command line"
[ -n "$RPING" ] || finish "FAIL no peer_rping=\"...\" on the kernel command line"

echo "SIW-PEER: loading modules ($(cat /etc/siw-peer/variant) siw)"
while read -r mod; do
    [ -n "$mod" ] || continue
    if ! insmod "/lib/modules/$mod"; then
        # The SSE4.2 CRC32c driver refuses CPUs without it; crc32c_generic serves instead.
        case "$mod" in *crc32c-intel.ko) echo "SIW-PEER: $mod not loaded (no SSE4.2), using crc32c_generic" ;;
                       *) finish "FAIL insmod $mod" ;; esac
    fi
done < /etc/siw-peer/modules.order

# eth0 appears once virtio_net has probed the device.
n=0
while [ ! -e /sys/class/net/eth0 ] && [ $n -lt 50 ]; do sleep 0.1; n=$((n + 1)); done
[ -e /sys/class/net/eth0 ] || finish "FAIL no eth0"
ip link set lo up
ip addr add "$IP" dev eth0 || finish "FAIL ip addr add $IP"
ip link set eth0 up || finish "FAIL ip link set eth0 up"
if [ -n "$NEIGH" ]; then
    ip neigh replace "${NEIGH%%,*}" lladdr "${NEIGH#*,}" dev eth0 nud permanent || finish "FAIL ip neigh $NEIGH"
fi
echo "SIW-PEER: eth0 $(cat /sys/class/net/eth0/address) $IP up"

rdma link add siw0 type siw netdev eth0 || finish "FAIL rdma link add siw0"
echo "SIW-PEER: $(rdma link show siw0/1 2>&1)"

echo "SIW-PEER: ready after $(cut -d' ' -f1 /proc/uptime) s of uptime; running rping $RPING (limit ${WAIT}s)"
t0=$(cut -d' ' -f1 /proc/uptime)
# shellcheck disable=SC2086
timeout "$WAIT" rping $RPING > /tmp/rping.out 2>&1
rc=$?
t1=$(cut -d' ' -f1 /proc/uptime)
cat /tmp/rping.out
# rping's whole life as the guest's clock sees it (connection set-up, the pings, the close).
echo "SIW-PEER: rping ran $(awk "BEGIN { printf \"%.2f\", $t1 - $t0 }") s of uptime"
echo "SIW-PEER: rping exit status $rc"
lines=$(grep -c 'ping data: rdma-ping-' /tmp/rping.out)
# With -C N every one of the N pings must have been validated (rping -v prints each one).
want=$(echo " $RPING " | sed -n 's/.* -C \([0-9][0-9]*\) .*/\1/p')
echo "SIW-PEER: rping validated lines: $lines${want:+ of $want}"
if [ "$rc" -ne 0 ]; then
    finish "FAIL rping exit status $rc"
elif grep -qi 'error\|fail\|mismatch' /tmp/rping.out; then
    finish "FAIL rping reported an error"
elif [ "$lines" -eq 0 ] || { [ -n "$want" ] && [ "$lines" -ne "$want" ]; }; then
    finish "FAIL rping validated $lines pings${want:+, expected $want}"
else
    finish "PASS"
fi
