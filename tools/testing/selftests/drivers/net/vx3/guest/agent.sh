#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# vx3 guest control agent. Protocol on the virtio-serial port "ctl", one
# line per message:
#   host -> guest:  C <id> <timeout-seconds> <base64 of a sh script>
#   guest -> host:  R <id> <exit status> <base64 of stdout+stderr>
#                   H <boot id>   (hello, sent at start and on "C <id> 0 -")
# Each command runs in its own background subshell under timeout(1), so a
# hung command does not block the agent; replies are serialised with a
# mkdir lock.
export PATH=/usr/sbin:/usr/bin:/sbin:/bin
D=/tmp/vx3-agent
mkdir -p $D

port=
for i in $(seq 1 100); do
	for n in /sys/class/virtio-ports/*/name; do
		[ -f "$n" ] || continue
		if [ "$(cat "$n")" = ctl ]; then
			p=${n%/name}
			port=/dev/${p##*/}
		fi
	done
	[ -n "$port" ] && [ -c "$port" ] && break
	sleep 0.1
done
[ -c "$port" ] || { echo "vx3-agent: no ctl port" >/dev/console; exit 1; }
echo "vx3-agent: using $port" >/dev/console

exec 3<>"$port"

reply() { # id rc file
	until mkdir $D/lock 2>/dev/null; do usleep 2000; done
	{
		printf 'R %s %s ' "$1" "$2"
		base64 -w 0 <"$3"
		printf '\n'
	} >&3
	rmdir $D/lock
}

printf 'H %s\n' "$(cat /proc/sys/kernel/random/boot_id)" >&3
while :; do
	# read returns EOF while the host is not connected: retry.
	while read -r tag id tmo b64 <&3; do
		[ "$tag" = C ] || continue
		if [ "$b64" = - ]; then
			printf 'H %s\n' "$(cat /proc/sys/kernel/random/boot_id)" >&3
			continue
		fi
		(
			echo "$b64" | base64 -d >$D/$id.sh
			cd /root
			timeout -s KILL "$tmo" /bin/sh $D/$id.sh >$D/$id.out 2>&1 </dev/null
			rc=$?
			reply "$id" "$rc" $D/$id.out
			rm -f $D/$id.sh $D/$id.out
		) &
	done
	usleep 100000
done
