// SPDX-License-Identifier: GPL-2.0
/*
 * vx3-xdpbound - attach an XDP program bound to a device
 *
 *   vx3-xdpbound OBJECT PROGRAM IFNAME MAPDIR
 *
 * Loads PROGRAM of the BPF object OBJECT as a device-bound XDP program
 * (prog_ifindex IFNAME, BPF_F_XDP_DEV_BOUND_ONLY): only such a program's
 * XDP RX metadata kfuncs (bpf_xdp_metadata_rx_hash() and the others) are
 * resolved to the driver's xdp_metadata_ops; any other program gets the
 * kernel's default, which returns -EOPNOTSUPP. Pins the object's maps in
 * MAPDIR and attaches the program to IFNAME in driver mode. Detach with
 * "ip link set dev IFNAME xdpdrv off".
 *
 * Debian 12's bpftool (7.1) cannot load a device-bound program (its
 * "xdpmeta_dev" came later); libbpf 1.1 can.
 */

#include <errno.h>
#include <net/if.h>
#include <stdio.h>
#include <string.h>

#include <bpf/libbpf.h>
#include <linux/if_link.h>

#ifndef BPF_F_XDP_DEV_BOUND_ONLY
#define BPF_F_XDP_DEV_BOUND_ONLY	(1U << 6)
#endif

int main(int argc, char **argv)
{
	struct bpf_program *prog, *p;
	struct bpf_object *obj;
	unsigned int ifindex;
	int err;

	if (argc != 5) {
		fprintf(stderr, "usage: %s OBJECT PROGRAM IFNAME MAPDIR\n",
			argv[0]);
		return 2;
	}
	ifindex = if_nametoindex(argv[3]);
	if (!ifindex) {
		fprintf(stderr, "%s: %s\n", argv[3], strerror(errno));
		return 1;
	}
	obj = bpf_object__open_file(argv[1], NULL);
	if (!obj) {
		fprintf(stderr, "%s: %s\n", argv[1], strerror(errno));
		return 1;
	}
	prog = bpf_object__find_program_by_name(obj, argv[2]);
	if (!prog) {
		fprintf(stderr, "%s: no program %s\n", argv[1], argv[2]);
		goto fail;
	}
	bpf_object__for_each_program(p, obj)
		bpf_program__set_autoload(p, p == prog);
	bpf_program__set_ifindex(prog, ifindex);
	err = bpf_program__set_flags(prog, bpf_program__flags(prog) |
				     BPF_F_XDP_DEV_BOUND_ONLY);
	if (!err)
		err = bpf_object__load(obj);
	if (!err)
		err = bpf_object__pin_maps(obj, argv[4]);
	if (!err)
		err = bpf_xdp_attach(ifindex, bpf_program__fd(prog),
				     XDP_FLAGS_DRV_MODE, NULL);
	if (err) {
		fprintf(stderr, "%s %s on %s: %s\n", argv[1], argv[2], argv[3],
			strerror(-err));
		goto fail;
	}
	bpf_object__close(obj);
	return 0;
fail:
	bpf_object__close(obj);
	return 1;
}
