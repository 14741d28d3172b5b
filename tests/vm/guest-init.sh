#!/bin/sh
# PID 1 of the Soft-RoCE guest: mount, load modules, bring up rxe0 on a
# dummy netdev, run the command from the share, store its exit status, and
# power off. panic=-1 and QEMU's -no-reboot end the run on a crash.
export PATH=/usr/sbin:/usr/bin:/sbin:/bin
mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t devtmpfs dev /dev
mkdir -p /dev/pts /dev/shm
mount -t devpts devpts /dev/pts
mount -t tmpfs tmp /tmp
mount -t tmpfs run /run
for m in virtio_pci 9pnet_virtio 9p crc32_generic dummy rdma_rxe ib_uverbs rdma_ucm vgem; do
	modprobe "$m" || echo "init: modprobe $m failed"
done
mkdir -p /share
mount -t 9p -o trans=virtio,version=9p2000.L share /share
src=$(cat /share/srcdir)
mkdir -p "$src"
mount -t 9p -o trans=virtio,version=9p2000.L,ro src "$src"
if [ -f /share/builddir ]; then
	bld=$(cat /share/builddir)
	mkdir -p "$bld"
	mount -t 9p -o trans=virtio,version=9p2000.L build "$bld"
fi
ip link set lo up
ip link add rdma0 type dummy
ip addr add 10.11.0.1/24 dev rdma0
ip link set rdma0 up
rdma link add rxe0 type rxe netdev rdma0 || echo "init: rdma link add failed"
ulimit -l unlimited
cd "$(cat /share/cwd)" || cd /
export GDR_IN_VM=1 HOME=/tmp
sh /share/cmd > /share/log 2>&1
echo $? > /share/rc
sync
echo o > /proc/sysrq-trigger
sleep 10
