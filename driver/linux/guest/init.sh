#!/bin/sh
# /init of the RNIC driver guest (busybox sh). Loads rnic.ko with the module parameters given on the
# kernel command line as rnic_params=NAME=VALUE,NAME=VALUE... (',' separates them), waits for the
# module's self-test verdict, unloads the module (its remove path), and powers off. Prints
# "RNIC-GUEST: ..." progress lines and exactly one "RNIC-GUEST: PASS" or "RNIC-GUEST: FAIL <why>".
#   rnic_tool=TOOL,ARG,ARG...   after loading the module, run /bin/TOOL (rnic_rping or rnic_perf) with
#                   these arguments (',' for spaces), e.g. rnic_tool=rnic_rping,-C,20,-S,3000; its exit
#                   status decides PASS/FAIL too
#   rnic_kping=NAME=VALUE,...  after loading the module, give its interface rnic0 the address of
#                   rnic_ifaddr=ADDR/PREFIX, load the kernel consumer rnic_kping.ko with these
#                   parameters (rping's client through rdma_cm) and take its verdict (parameter result)
#   rnic_kping_refused=PORT  then load rnic_kping.ko once more against PORT, where nothing listens: the
#                   connect must fail and everything be torn down. The platform's TCP drops a SYN to a
#                   closed port unanswered (models/toe/tcp_engine.cpp says why), so the firmware's
#                   connect times out: rdma_cm reports the peer unreachable, result -110 (ETIMEDOUT)
#   rnic_kping_keep=1  leave rnic_kping.ko loaded (mode=server keep_listening=1: its listener open)
#                   while rnic.ko is removed, and remove it afterwards
#   rnic_rdmacore=ARG,ARG...  after loading the module, give rnic0 the address of rnic_ifaddr, load
#                   ib_uverbs and rdma_ucm (/etc/rnic-guest/modules.uverbs), show the device as
#                   libibverbs sees it (ibv_devinfo, through the provider librnic-rdmav34.so) and run
#                   Debian's rping with these arguments (',' for spaces); its exit status decides
#                   PASS/FAIL, and its output is printed between RPING-OUT lines
#   rnic_rdmacore_refused=PORT  then run rping's client once more against PORT, where nothing
#                   listens: it must fail (non-zero exit) within 150 s and leave no process behind
#   rnic_shell=1    drop to a shell instead of powering off (by hand: run-guest.py --shell)
# rnic.ko needs the kernel's RDMA core: the modules in /etc/rnic-guest/modules.order load first.
export PATH=/bin:/sbin:/usr/bin:/usr/sbin
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev 2>/dev/null

finish() {
    echo "RNIC-GUEST: $*"
    if grep -q 'rnic_shell=1' /proc/cmdline; then exec /bin/sh; fi
    sync
    poweroff -f
    sleep 5
    reboot -f
}

PARAMS=$(sed -n -e 's/.*[[:space:]]rnic_params=\([^[:space:]]*\).*/\1/p' /proc/cmdline | tr ',' ' ')
DEV=""
for d in /sys/bus/pci/devices/*; do
    if [ "$(cat "$d/vendor")" = "0x1a4e" ] && [ "$(cat "$d/device")" = "0x0001" ]; then DEV=$d; fi
done
[ -n "$DEV" ] || finish "FAIL no PCI device 1a4e:0001 (is x-pci-proxy-dev attached?)"
echo "RNIC-GUEST: found $(basename "$DEV") class $(cat "$DEV/class") resource0 $(head -n1 "$DEV/resource")"
while read -r mod; do
    [ -n "$mod" ] || continue
    insmod "/lib/modules/$mod" || finish "FAIL insmod $mod"
done < /etc/rnic-guest/modules.order
echo "RNIC-GUEST: RDMA core loaded:$(tr '\n' ' ' < /etc/rnic-guest/modules.order | sed 's|[^ ]*/||g; s|\.ko||g; s|^| |')"
echo "RNIC-GUEST: insmod rnic.ko $PARAMS"
start=$(cut -d' ' -f1 /proc/uptime)
# shellcheck disable=SC2086
insmod /rnic.ko $PARAMS || finish "FAIL insmod rnic.ko failed"
end=$(cut -d' ' -f1 /proc/uptime)
echo "RNIC-GUEST: probe took $start..$end s of uptime"
[ -e /sys/bus/pci/drivers/rnic/$(basename "$DEV") ] || finish "FAIL the driver did not bind to $(basename "$DEV")"
result=$(cat /sys/module/rnic/parameters/selftest_result)
echo "RNIC-GUEST: selftest_result=$result"
TOOL=$(sed -n -e 's/.*[[:space:]]rnic_tool=\([^[:space:]]*\).*/\1/p' /proc/cmdline | tr ',' ' ')
if [ -n "$TOOL" ]; then
    [ -c /dev/rnic0 ] || finish "FAIL no /dev/rnic0"
    echo "RNIC-GUEST: $TOOL"
    # shellcheck disable=SC2086
    $TOOL || finish "FAIL ${TOOL%% *} exited with status $?"
fi
RCORE=$(sed -n -e 's/.*[[:space:]]rnic_rdmacore=\([^[:space:]]*\).*/\1/p' /proc/cmdline | tr ',' ' ')
rcore=1
if [ -n "$RCORE" ]; then
    [ -e /etc/rnic-guest/no-rdma-core ] && finish "FAIL the image has no rdma-core: $(cat /etc/rnic-guest/no-rdma-core)"
    while read -r mod; do
        [ -n "$mod" ] || continue
        insmod "/lib/modules/$mod" || finish "FAIL insmod $mod"
    done < /etc/rnic-guest/modules.uverbs
    echo "RNIC-GUEST: user verbs loaded:$(tr '\n' ' ' < /etc/rnic-guest/modules.uverbs | sed 's|[^ ]*/||g; s|\.ko||g; s|^| |')"
    IFADDR=$(sed -n -e 's/.*[[:space:]]rnic_ifaddr=\([^[:space:]]*\).*/\1/p' /proc/cmdline)
    ip link set rnic0 up || finish "FAIL ip link set rnic0 up"
    ip addr add "$IFADDR" dev rnic0 || finish "FAIL ip addr add $IFADDR dev rnic0"
    echo "RNIC-GUEST: rnic0 $IFADDR up; $(ls /dev/infiniband | tr '\n' ' ')"
    # IBV_SHOW_WARNINGS: libibverbs says why a device found no provider (or the provider did not load).
    IBV_SHOW_WARNINGS=1 ibv_devinfo -v > /tmp/devinfo.out 2>&1
    echo "RNIC-GUEST: ibv_devinfo exit status $?"
    sed 's/^/DEVINFO: /' /tmp/devinfo.out
    echo "RNIC-GUEST: rping $RCORE"
    t0=$(cut -d' ' -f1 /proc/uptime)
    # shellcheck disable=SC2086
    timeout 300 rping $RCORE > /tmp/rping.out 2>&1
    rcore=$?
    t1=$(cut -d' ' -f1 /proc/uptime)
    echo "RNIC-GUEST: RPING-OUT begin"
    cat /tmp/rping.out
    echo "RNIC-GUEST: RPING-OUT end"
    echo "RNIC-GUEST: rping exit status $rcore after $t0..$t1 s of uptime"
    [ "$rcore" = 0 ] || finish "FAIL rping exit status $rcore"
    REFUSED=$(sed -n -e 's/.*[[:space:]]rnic_rdmacore_refused=\([0-9]*\).*/\1/p' /proc/cmdline)
    if [ -n "$REFUSED" ]; then
        PEER=$(echo "$RCORE" | sed -n 's/.*-a \([^ ]*\).*/\1/p')
        echo "RNIC-GUEST: rping -c -a $PEER -p $REFUSED -C 1 (nothing listens there)"
        t0=$(cut -d' ' -f1 /proc/uptime)
        timeout 150 rping -c -a "$PEER" -p "$REFUSED" -C 1 -S 100 > /tmp/refused.out 2>&1
        refused=$?
        t1=$(cut -d' ' -f1 /proc/uptime)
        sed 's/^/REFUSED-OUT: /' /tmp/refused.out
        echo "RNIC-GUEST: rping against port $REFUSED exit status $refused after $t0..$t1 s of uptime"
        # 124/143: timeout had to stop it (a hang); 0: it connected where nothing listens.
        case "$refused" in 0|124|143) finish "FAIL rping against port $REFUSED: exit status $refused" ;; esac
        pidof rping > /dev/null && finish "FAIL an rping process is left"
    fi
fi
KPING=$(sed -n -e 's/.*[[:space:]]rnic_kping=\([^[:space:]]*\).*/\1/p' /proc/cmdline | tr ',' ' ')
kping=1
if [ -n "$KPING" ]; then
    IFADDR=$(sed -n -e 's/.*[[:space:]]rnic_ifaddr=\([^[:space:]]*\).*/\1/p' /proc/cmdline)
    for ibdev in /sys/class/infiniband/*; do
        [ -e "$ibdev" ] || finish "FAIL no RDMA device registered"
        echo "RNIC-GUEST: RDMA device $(basename "$ibdev"): node_type $(cat "$ibdev/node_type"), port 1 $(cat "$ibdev/ports/1/state"), gid $(cat "$ibdev/ports/1/gids/0")"
    done
    ip link set rnic0 up || finish "FAIL ip link set rnic0 up"
    ip addr add "$IFADDR" dev rnic0 || finish "FAIL ip addr add $IFADDR dev rnic0"
    echo "RNIC-GUEST: rnic0 $(cat /sys/class/net/rnic0/address) $IFADDR up, port 1 $(cat /sys/class/infiniband/rnic0/ports/1/state)"
    echo "RNIC-GUEST: insmod rnic_kping.ko $KPING"
    t0=$(cut -d' ' -f1 /proc/uptime)
    # shellcheck disable=SC2086
    insmod /rnic_kping.ko $KPING || finish "FAIL insmod rnic_kping.ko failed"
    t1=$(cut -d' ' -f1 /proc/uptime)
    kping=$(cat /sys/module/rnic_kping/parameters/result)
    echo "RNIC-GUEST: rnic_kping result=$kping after $t0..$t1 s of uptime"
    if grep -q 'rnic_kping_keep=1' /proc/cmdline; then
        echo "RNIC-GUEST: rnic_kping stays loaded, its listener open, while rnic is removed"
    else
        rmmod rnic_kping || finish "FAIL rmmod rnic_kping failed"
    fi
    [ "$kping" = 0 ] || finish "FAIL rnic_kping result $kping"
    REFUSED=$(sed -n -e 's/.*[[:space:]]rnic_kping_refused=\([0-9]*\).*/\1/p' /proc/cmdline)
    if [ -n "$REFUSED" ]; then
        echo "RNIC-GUEST: insmod rnic_kping.ko server_port=$REFUSED count=1 (nothing listens there)"
        insmod /rnic_kping.ko server_port="$REFUSED" count=1 || finish "FAIL insmod rnic_kping.ko (refused) failed"
        refused=$(cat /sys/module/rnic_kping/parameters/result)
        echo "RNIC-GUEST: rnic_kping result=$refused against port $REFUSED"
        rmmod rnic_kping || finish "FAIL rmmod rnic_kping (refused) failed"
        [ "$refused" = -110 ] || finish "FAIL a connect to port $REFUSED gave result $refused, not -110 (ETIMEDOUT)"
    fi
fi
rmmod rnic || finish "FAIL rmmod rnic failed"
dmesg | grep -q 'rnic .*: removed' || finish "FAIL no 'removed' line from the driver"
if [ -d /sys/module/rnic_kping ]; then
    rmmod rnic_kping || finish "FAIL rmmod rnic_kping after rnic failed"
    echo "RNIC-GUEST: rnic_kping removed after rnic"
fi
# Once more without a self-test: remove must leave the device ready for the next probe.
insmod /rnic.ko || finish "FAIL the second insmod failed"
[ -c /dev/rnic0 ] || finish "FAIL no /dev/rnic0 after the second probe"
rmmod rnic || finish "FAIL the second rmmod failed"
[ "$(dmesg | grep -c 'rnic .*: device ready')" -ge 2 ] || finish "FAIL the device was not ready at the second probe"
echo "RNIC-GUEST: probed, removed, probed and removed again"
case "$result" in
    0) finish "PASS" ;;
    1) if [ -n "$TOOL" ]; then finish "PASS (${TOOL%% *})"; elif [ "$rcore" = 0 ]; then finish "PASS (rping)"; elif [ "$kping" = 0 ]; then finish "PASS (rnic_kping)"
       else finish "PASS (no self-test asked for)"; fi ;;
    *) finish "FAIL selftest_result $result" ;;
esac
