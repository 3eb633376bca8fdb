#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# /usr/lib/dracut/modules.d/90vx3/module-setup.sh (package vx3-dkms): while
# the vx3 policy is on, the initramfs holds /etc/modprobe.d/vx3.conf and
# what it needs: vx3-load, vx3 (if the kernel has one) and vmxnet3, its
# fallback.

check() {
	[[ -e /etc/modprobe.d/vx3.conf ]] || return 255
	return 0
}

depends() {
	return 0
}

installkernel() {
	hostonly='' instmods vx3 vmxnet3
}

install() {
	inst_simple /etc/modprobe.d/vx3.conf
	inst_script /usr/lib/vx3-dkms/vx3-load
	inst_multiple cat uname
}
