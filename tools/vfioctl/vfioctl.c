// SPDX-License-Identifier: GPL-2.0-only
/*
 * vfioctl: bind PCI devices to the vfio-dkms driver and back, from the
 * command line, from /etc/vfio/devices.conf at boot, and from udev.
 * See vfioctl(8).
 */
#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "bind.h"
#include "boot.h"
#include "commands.h"
#include "doctor.h"
#include "pciids.h"
#include "vfioctl.h"

void msg_err(const char *fmt, ...)
{
	va_list ap;

	fputs("vfioctl: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

void msg_info(const struct vfioctl *v, const char *fmt, ...)
{
	va_list ap;

	(void)v;
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
}

/* A command has either run (no arguments) or run_args. */
static const struct command {
	const char *name;
	int (*run)(const struct vfioctl *v);
	int (*run_args)(const struct vfioctl *v, int argc, char **argv);
	const char *help;
	bool changes;		/* runs under the state lock */
} commands[] = {
	{ "list", cmd_list, NULL,
	  "every PCI device, its IOMMU group and driver", false },
	{ "status", cmd_status, NULL,
	  "configured devices: configured vs actual", false },
	{ "check", cmd_check, NULL, "validate the configuration file",
	  false },
	{ "apply", cmd_apply, NULL, "bind every configured device to vfio",
	  true },
	{ "bind", NULL, cmd_bind,
	  "DEV... [owner= group= mode= force]  bind devices to vfio", true },
	{ "unbind", NULL, cmd_unbind,
	  "DEV...  give devices back to their driver", true },
	{ "unbind-all", cmd_unbind_all, NULL,
	  "give back every device on vfio", true },
	{ "udev-owner", NULL, cmd_udev_owner,
	  "pci:N  (udev) ownership of a node", false },
	{ "udev-claim", NULL, cmd_udev_claim,
	  "DEV  (udev) claim a configured device", true },
	{ "doctor", NULL, cmd_doctor,
	  "[DEV...]  why devices can or cannot go to a user, and the fix",
	  false },
};

static void usage(FILE *f)
{
	size_t i;

	fprintf(f,
		"usage: vfioctl [options] command [args]\n"
		"options:\n"
		"  -c, --config FILE      configuration (/etc/vfio/devices.conf)\n"
		"  -s, --sysfs-root DIR   sysfs to use instead of /sys\n"
		"      --state-dir DIR    remembered drivers (/run/vfio)\n"
		"      --dev-dir DIR      group nodes (/dev/vfio)\n"
		"      --proc-root DIR    procfs to use instead of /proc\n"
		"  -f, --force            also take devices the host is using\n"
		"      --save             bind/unbind: also edit the configuration\n"
		"  -n, --dry-run          apply: only say what would be done\n"
		"      --boot             apply: the boot unit's run: nothing when no\n"
		"                         device is configured, else wait (--wait 60),\n"
		"                         modprobe vfio_pci, apply\n"
		"      --wait SECS        apply: first wait up to SECS in all for udev\n"
		"                         to process the configured devices\n"
		"      --udev-data DIR    udev database instead of /run/udev/data\n"
		"      --class CLASS      list: net, storage, display, usb, ...\n"
		"      --pci-ids FILE     names for list (pci.ids, FILE:FILE...)\n"
		"      --memlock-for SIZE doctor: the DMA the owner will map (4G)\n"
		"      --root DIR         doctor: read /etc, /lib, /usr below DIR\n"
		"  -j, --json             machine-readable list and status\n"
		"  -h, --help             this text\n"
		"  -V, --version          print the version\n"
		"commands:\n");
	for (i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		fprintf(f, "  %-11s %s\n", commands[i].name, commands[i].help);
	fprintf(f, "exit: 0 ok, 1 usage/config error, 2 partial failure, "
		   "3 failed (device unchanged),\n      4 restore failed, "
		   "5 status differs from the configuration, doctor found a fail\n");
}

/* --wait: whole seconds, at most WAIT_MAX. */
#define WAIT_MAX	3600

static bool parse_seconds(const char *s, int *out)
{
	unsigned long n;
	char *end;

	if (*s < '0' || *s > '9')
		return false;
	errno = 0;
	n = strtoul(s, &end, 10);
	if (errno || *end || n > WAIT_MAX)
		return false;
	*out = (int)n;
	return true;
}

/* The exit code @c, unless what was printed could not be written. */
static int finish(int c)
{
	if (fflush(stdout)) {
		msg_err("writing output: %m");
		return c ? c : EXIT_FAILED;
	}
	return c;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "config", required_argument, NULL, 'c' },
		{ "sysfs-root", required_argument, NULL, 's' },
		{ "state-dir", required_argument, NULL, 'S' },
		{ "dev-dir", required_argument, NULL, 'D' },
		{ "proc-root", required_argument, NULL, 'P' },
		{ "force", no_argument, NULL, 'f' },
		{ "save", no_argument, NULL, 'W' },
		{ "dry-run", no_argument, NULL, 'n' },
		{ "boot", no_argument, NULL, 'B' },
		{ "wait", required_argument, NULL, 'T' },
		{ "udev-data", required_argument, NULL, 'U' },
		{ "class", required_argument, NULL, 'C' },
		{ "pci-ids", required_argument, NULL, 'I' },
		{ "memlock-for", required_argument, NULL, 'M' },
		{ "root", required_argument, NULL, 'R' },
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	struct vfioctl v = {
		.sysfs = "/sys",
		.config = "/etc/vfio/devices.conf",
		.state_dir = "/run/vfio",
		.dev_dir = "/dev/vfio",
		.proc = "/proc",
		.root = "",
		.udev_data = "/run/udev/data",
		.modprobe = BOOT_MODPROBE,
		.wait = -1,
		.pci_ids = PCI_IDS_DEFAULTS,
	};
	const char *env;
	size_t i;
	int c;

	/* Tests put a recording fake in its place. */
	env = getenv(BOOT_MODPROBE_ENV);
	if (env && *env)
		v.modprobe = env;
	while ((c = getopt_long(argc, argv, "c:s:fnjhV", opts, NULL)) != -1) {
		switch (c) {
		case 'c':
			v.config = optarg;
			break;
		case 's':
			v.sysfs = optarg;
			break;
		case 'S':
			v.state_dir = optarg;
			break;
		case 'D':
			v.dev_dir = optarg;
			break;
		case 'P':
			v.proc = optarg;
			break;
		case 'f':
			v.force = true;
			break;
		case 'W':
			v.save = true;
			break;
		case 'n':
			v.dry_run = true;
			break;
		case 'B':
			v.boot = true;
			break;
		case 'T':
			if (!parse_seconds(optarg, &v.wait)) {
				msg_err("--wait %s: not a number of seconds (0 to %d)",
					optarg, WAIT_MAX);
				return EXIT_USAGE;
			}
			break;
		case 'U':
			v.udev_data = optarg;
			break;
		case 'C':
			v.class = optarg;
			break;
		case 'I':
			v.pci_ids = optarg;
			break;
		case 'M':
			if (!parse_size(optarg, &v.memlock_for) ||
			    !v.memlock_for) {
				msg_err("--memlock-for %s: not a size (like 4G or 512M)",
					optarg);
				return EXIT_USAGE;
			}
			break;
		case 'R':
			/* "/" and "" both mean the real root. */
			v.root = strcmp(optarg, "/") ? optarg : "";
			break;
		case 'j':
			v.json = true;
			break;
		case 'h':
			usage(stdout);
			return EXIT_OK;
		case 'V':
			printf("vfioctl %s\n", VFIOCTL_VERSION);
			return EXIT_OK;
		default:
			usage(stderr);
			return EXIT_USAGE;
		}
	}
	if (optind >= argc) {
		usage(stderr);
		return EXIT_USAGE;
	}
	for (i = 0; i < sizeof(commands) / sizeof(commands[0]); i++) {
		if (strcmp(argv[optind], commands[i].name))
			continue;
		if (v.dry_run && commands[i].run != cmd_apply) {
			msg_err("--dry-run only goes with apply");
			return EXIT_USAGE;
		}
		if (!commands[i].run_args && optind + 1 < argc) {
			msg_err("%s takes no arguments", commands[i].name);
			return EXIT_USAGE;
		}
		if ((v.boot || v.wait >= 0) && commands[i].run != cmd_apply) {
			msg_err("--%s only goes with apply",
				v.boot ? "boot" : "wait");
			return EXIT_USAGE;
		}
		if (v.boot && v.dry_run) {
			msg_err("--boot loads the vfio driver: not with --dry-run");
			return EXIT_USAGE;
		}
		if (v.boot && v.wait < 0)
			v.wait = BOOT_WAIT_DEFAULT;
		/* Before the lock: udev-claim takes it while udev works. */
		if (v.boot || v.wait > 0) {
			bool done;

			c = apply_prepare(&v, &done);
			if (done)
				return finish(c);
		}
		/* Held until exit: the kernel drops it with the last fd. */
		if (commands[i].changes && !v.dry_run) {
			int lock = state_lock(&v);

			if (lock < 0) {
				msg_err("locking %s/lock: %s", v.state_dir,
					strerror(-lock));
				return EXIT_FAILED;
			}
		}
		if (commands[i].run_args)
			c = commands[i].run_args(&v, argc - optind - 1,
						 argv + optind + 1);
		else
			c = commands[i].run(&v);
		return finish(c);
	}
	msg_err("unknown command \"%s\"", argv[optind]);
	usage(stderr);
	return EXIT_USAGE;
}
