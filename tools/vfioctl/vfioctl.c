// SPDX-License-Identifier: GPL-2.0-only
/*
 * vfioctl: bind PCI devices to the vfio-dkms driver and back, from the
 * command line, from /etc/vfio/devices.conf at boot, and from udev.
 * See vfioctl(8).
 *
 * As in systemd's tools, main() is parse_argv(), which fills a struct
 * args, then run(), which checks the verb's arguments and options against
 * its line of the verb table, takes the lock when that line says so and
 * calls it.  Every rule about which verb takes what lives in the table.
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
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

/*
 * One line and where to read more, not the whole help, which would push
 * the line that matters off the screen.
 */
int msg_usage(const char *fmt, ...)
{
	va_list ap;

	fputs("vfioctl: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputs("; see vfioctl --help\n", stderr);
	return EXIT_USAGE;
}

/*
 * The options that only some verbs take; each verb's line in the table
 * says which.  The others say where things are (--config, --sysfs-root,
 * --root, ...) and go with every verb.
 */
enum {
	OPT_FORCE	= 1u << 0,
	OPT_SAVE	= 1u << 1,
	OPT_DRY_RUN	= 1u << 2,
	OPT_BOOT	= 1u << 3,
	OPT_WAIT	= 1u << 4,
	OPT_CLASS	= 1u << 5,
	OPT_MEMLOCK	= 1u << 6,
	OPT_JSON	= 1u << 7,
	OPT_SYNTAX	= 1u << 8,
};

static const struct {
	unsigned int opt;
	const char *name;
} verb_options[] = {
	{ OPT_FORCE, "--force" },
	{ OPT_SAVE, "--save" },
	{ OPT_DRY_RUN, "--dry-run" },
	{ OPT_BOOT, "--boot" },
	{ OPT_WAIT, "--wait" },
	{ OPT_CLASS, "--class" },
	{ OPT_MEMLOCK, "--memlock-for" },
	{ OPT_JSON, "--json" },
	{ OPT_SYNTAX, "--syntax" },
};

/* The command line, parsed. */
struct args {
	struct vfioctl v;	/* what the verbs see */
	unsigned int given;	/* the OPT_* that were given */
	int argc;		/* the verb and its arguments */
	char **argv;
};

/* apply: --boot and --wait do their part before the lock is taken. */
static int apply_before_lock(const struct vfioctl *v, bool *done)
{
	*done = false;
	if (!v->boot && v->wait <= 0)
		return EXIT_OK;
	return apply_prepare(v, done);
}

#define MANY	INT_MAX

/*
 * A verb takes min_args to max_args arguments and the options in @opts.
 * With @lock it changes devices or their state, so it runs under the
 * state lock (not with --dry-run).  @before_lock, when set, runs first,
 * outside the lock, and may end the run (*done).  The function is @run
 * when the verb takes no arguments, else @run_args.
 */
static const struct verb {
	const char *name;
	const char *args;	/* for --help and usage errors */
	const char *help;
	int min_args, max_args;
	unsigned int opts;
	bool lock;
	int (*before_lock)(const struct vfioctl *v, bool *done);
	int (*run)(const struct vfioctl *v);
	int (*run_args)(const struct vfioctl *v, int argc, char **argv);
} verbs[] = {
	{ .name = "list", .args = "", .opts = OPT_CLASS | OPT_JSON,
	  .help = "every PCI device, its IOMMU group and driver",
	  .run = cmd_list },
	{ .name = "status", .args = "", .opts = OPT_JSON,
	  .help = "configured devices: configured vs actual",
	  .run = cmd_status },
	{ .name = "check", .args = "", .opts = OPT_SYNTAX | OPT_JSON,
	  .help = "validate the configuration file (and this machine)",
	  .run = cmd_check },
	{ .name = "apply", .args = "", .lock = true,
	  .opts = OPT_FORCE | OPT_DRY_RUN | OPT_BOOT | OPT_WAIT,
	  .help = "bind every configured device to vfio",
	  .before_lock = apply_before_lock, .run = cmd_apply },
	{ .name = "bind", .args = "DEVICE... [owner= group= mode= force]",
	  .min_args = 1, .max_args = MANY, .opts = OPT_FORCE | OPT_SAVE,
	  .lock = true, .help = "bind devices to vfio",
	  .run_args = cmd_bind },
	{ .name = "unbind", .args = "DEVICE...", .min_args = 1,
	  .max_args = MANY, .opts = OPT_FORCE | OPT_SAVE, .lock = true,
	  .help = "give devices back to their driver",
	  .run_args = cmd_unbind },
	{ .name = "unbind-all", .args = "", .opts = OPT_FORCE, .lock = true,
	  .help = "give back every device on vfio", .run = cmd_unbind_all },
	{ .name = "udev-owner", .args = "pci:N", .min_args = 1,
	  .max_args = 1, .help = "(udev) ownership of a group node",
	  .run_args = cmd_udev_owner },
	{ .name = "udev-claim", .args = "DEVICE", .min_args = 1,
	  .max_args = 1, .opts = OPT_FORCE, .lock = true,
	  .help = "(udev) claim a configured device",
	  .run_args = cmd_udev_claim },
	{ .name = "doctor", .args = "[DEVICE...]", .max_args = MANY,
	  .opts = OPT_JSON | OPT_MEMLOCK,
	  .help = "why devices can or cannot go to a user, and the fix",
	  .run_args = cmd_doctor },
};

#define N_VERBS	(sizeof(verbs) / sizeof(verbs[0]))

static void print_usage(void)
{
	char head[64];
	size_t i;

	printf("usage: vfioctl [options] verb [arguments]\n"
	       "options:\n"
	       "  -c, --config FILE      configuration (/etc/vfio/devices.conf)\n"
	       "  -s, --sysfs-root DIR   sysfs to use instead of /sys\n"
	       "      --state-dir DIR    remembered drivers (/run/vfio)\n"
	       "      --dev-dir DIR      group nodes (/dev/vfio)\n"
	       "      --proc-root DIR    procfs to use instead of /proc\n"
	       "      --root DIR         doctor: read /etc, /lib, /usr below DIR\n"
	       "      --udev-data DIR    udev database instead of /run/udev/data\n"
	       "      --pci-ids FILE     names for list (pci.ids, FILE:FILE...)\n"
	       "  -f, --force            apply, bind, udev-claim: also take devices\n"
	       "                         the host is using; unbind: also devices\n"
	       "                         a process holds\n"
	       "      --save             bind, unbind: also edit the configuration\n"
	       "  -n, --dry-run          apply: only say what would be done\n"
	       "      --syntax           check: the file alone, not this machine\n"
	       "      --boot             apply: the boot unit's run: nothing when no\n"
	       "                         device is configured, else wait (--wait 60),\n"
	       "                         modprobe vfio_pci, apply\n"
	       "      --wait SECS        apply: first wait up to SECS in all for udev\n"
	       "                         to process the configured devices\n"
	       "      --class CLASS      list: net, storage, display, usb, ...\n"
	       "      --memlock-for SIZE doctor: the DMA the owner will map (4G)\n"
	       "  -j, --json             list, status, check, doctor: machine-readable\n"
	       "  -h, --help             this text\n"
	       "  -V, --version          print the version\n"
	       "verbs:\n");
	for (i = 0; i < N_VERBS; i++) {
		snprintf(head, sizeof(head), "%s%s%s", verbs[i].name,
			 verbs[i].args[0] ? " " : "", verbs[i].args);
		if (strlen(head) > 24)
			printf("  %s\n  %-24s %s\n", head, "", verbs[i].help);
		else
			printf("  %-24s %s\n", head, verbs[i].help);
	}
	printf("exit: 0 ok, 1 usage/config error, 2 partial failure, "
	       "3 failed (device unchanged),\n      4 restore failed, "
	       "5 status differs from the configuration, doctor found a fail,\n"
	       "      or check found a valid file this machine cannot apply\n");
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

static const struct option long_options[] = {
	{ "config", required_argument, NULL, 'c' },
	{ "sysfs-root", required_argument, NULL, 's' },
	{ "state-dir", required_argument, NULL, 'S' },
	{ "dev-dir", required_argument, NULL, 'D' },
	{ "proc-root", required_argument, NULL, 'P' },
	{ "force", no_argument, NULL, 'f' },
	{ "save", no_argument, NULL, 'W' },
	{ "dry-run", no_argument, NULL, 'n' },
	{ "syntax", no_argument, NULL, 'Y' },
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

/*
 * What getopt_long() refused (with opterr off, so that this is the only
 * line): @c is ':' for a missing argument, '?' otherwise; @arg is the
 * element it was looking at.
 */
static int bad_option(int c, const char *arg)
{
	int len = (int)strcspn(arg, "="), n = 0;
	const struct option *o;

	if (strncmp(arg, "--", 2)) {
		if (c == ':')
			return msg_usage("-%c needs an argument", optopt);
		return msg_usage("unknown option '-%c'", optopt);
	}
	if (c == ':')
		return msg_usage("%.*s needs an argument", len, arg);
	/* A known long option only comes back as '?' with a value. */
	if (optopt)
		return msg_usage("%.*s takes no argument", len, arg);
	for (o = long_options; o->name; o++)
		n += len > 2 && !strncmp(o->name, arg + 2, len - 2);
	return msg_usage("%s option '%.*s'", n > 1 ? "ambiguous" : "unknown",
			 len, arg);
}

/*
 * One option into @a.  Returns -1 to go on, else the exit code to end
 * with (after --help, --version or a usage error).
 */
static int set_option(struct args *a, int c, char *arg)
{
	struct vfioctl *v = &a->v;

	switch (c) {
	case 'c':
		v->config = arg;
		break;
	case 's':
		v->sysfs = arg;
		break;
	case 'S':
		v->state_dir = arg;
		break;
	case 'D':
		v->dev_dir = arg;
		break;
	case 'P':
		v->proc = arg;
		break;
	case 'U':
		v->udev_data = arg;
		break;
	case 'I':
		v->pci_ids = arg;
		break;
	case 'R':
		/* "/" and "" both mean the real root. */
		v->root = strcmp(arg, "/") ? arg : "";
		break;
	case 'f':
		v->force = true;
		a->given |= OPT_FORCE;
		break;
	case 'W':
		v->save = true;
		a->given |= OPT_SAVE;
		break;
	case 'n':
		v->dry_run = true;
		a->given |= OPT_DRY_RUN;
		break;
	case 'Y':
		v->syntax = true;
		a->given |= OPT_SYNTAX;
		break;
	case 'B':
		v->boot = true;
		a->given |= OPT_BOOT;
		break;
	case 'T':
		if (!parse_seconds(arg, &v->wait))
			return msg_usage("--wait %s: not a number of seconds (0 to %d)",
					 arg, WAIT_MAX);
		a->given |= OPT_WAIT;
		break;
	case 'C':
		v->class = arg;
		a->given |= OPT_CLASS;
		break;
	case 'M':
		if (!parse_size(arg, &v->memlock_for) || !v->memlock_for)
			return msg_usage("--memlock-for %s: not a size (like 4G or 512M)",
					 arg);
		a->given |= OPT_MEMLOCK;
		break;
	case 'j':
		v->json = true;
		a->given |= OPT_JSON;
		break;
	}
	return -1;
}

/*
 * The options into @a->v, the verb and its arguments into @a->argc and
 * @a->argv.  Returns -1 to go on, else the exit code to end with.
 */
static int parse_argv(int argc, char **argv, struct args *a)
{
	const char *env;
	int c, ret;

	*a = (struct args){ .v = {
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
	} };
	/* Tests put a recording fake in its place. */
	env = getenv(BOOT_MODPROBE_ENV);
	if (env && *env)
		a->v.modprobe = env;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":c:s:fnjhV", long_options,
				NULL)) != -1) {
		switch (c) {
		case 'h':
			print_usage();
			return EXIT_OK;
		case 'V':
			printf("vfioctl %s\n", VFIOCTL_VERSION);
			return EXIT_OK;
		case ':':
		case '?':
			return bad_option(c, argv[optind - 1]);
		}
		ret = set_option(a, c, optarg);
		if (ret >= 0)
			return ret;
	}
	if (a->v.boot && a->v.wait < 0)
		a->v.wait = BOOT_WAIT_DEFAULT;
	a->argc = argc - optind;
	a->argv = argv + optind;
	return -1;
}

/* "--json only goes with list, status or doctor" for the first of @bad. */
static int refuse_option(unsigned int bad)
{
	const size_t n_opts = sizeof(verb_options) / sizeof(verb_options[0]);
	size_t i = 0, j, len = 0, n = 0, last = 0;
	char with[256];

	while (i + 1 < n_opts && !(verb_options[i].opt & bad))
		i++;
	for (j = 0; j < N_VERBS; j++)
		if (verbs[j].opts & verb_options[i].opt)
			last = j;
	for (j = 0; j < N_VERBS; j++) {
		if (!(verbs[j].opts & verb_options[i].opt))
			continue;
		len += snprintf(with + len, sizeof(with) - len, "%s%s",
				!n++ ? "" : j == last ? " or " : ", ",
				verbs[j].name);
	}
	return msg_usage("%s only goes with %s", verb_options[i].name, with);
}

/* The verb's arguments and options against its line of the table. */
static int check_verb(const struct verb *verb, const struct args *a)
{
	int n = a->argc - 1;

	if (n > 0 && !verb->max_args)
		return msg_usage("%s takes no arguments", verb->name);
	if (n < verb->min_args)
		return msg_usage("missing argument: %s %s", verb->name,
				 verb->args);
	if (n > verb->max_args)
		return msg_usage("too many arguments: %s %s", verb->name,
				 verb->args);
	if (a->given & ~verb->opts)
		return refuse_option(a->given & ~verb->opts);
	if (a->v.boot && a->v.dry_run)
		return msg_usage("--boot loads the vfio driver: not with --dry-run");
	return EXIT_OK;
}

static int run(const struct args *a)
{
	const struct verb *verb = NULL;
	bool done;
	size_t i;
	int ret;

	if (!a->argc)
		return msg_usage("missing verb");
	for (i = 0; i < N_VERBS && !verb; i++)
		if (!strcmp(a->argv[0], verbs[i].name))
			verb = &verbs[i];
	if (!verb)
		return msg_usage("unknown verb '%s'", a->argv[0]);
	ret = check_verb(verb, a);
	if (ret)
		return ret;
	/* Before the lock: udev-claim takes it while udev works. */
	if (verb->before_lock) {
		ret = verb->before_lock(&a->v, &done);
		if (done)
			return ret;
	}
	/* Held until exit: the kernel drops it with the last fd. */
	if (verb->lock && !a->v.dry_run) {
		int lock = state_lock(&a->v);

		if (lock < 0) {
			msg_err("locking %s/lock: %s", a->v.state_dir,
				strerror(-lock));
			return EXIT_FAILED;
		}
	}
	if (verb->run)
		return verb->run(&a->v);
	return verb->run_args(&a->v, a->argc - 1, a->argv + 1);
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
	struct args a;
	int ret;

	ret = parse_argv(argc, argv, &a);
	if (ret < 0)
		ret = run(&a);
	return finish(ret);
}
