// SPDX-License-Identifier: GPL-2.0-only
/*
 * The subcommands: each loads what it needs (configuration, topology),
 * decides everything before it touches a device, and reports one line per
 * device so that the journal tells what happened to each.
 */
#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <limits.h>

#include "bind.h"
#include "commands.h"
#include "config.h"
#include "confedit.h"
#include "inuse.h"
#include "json.h"
#include "pciids.h"
#include "plan.h"
#include "sysfs.h"

/*
 * Load the configuration.  A missing file is an empty configuration when
 * @missing_ok (the boot path must not fail on a machine without one).
 * Returns EXIT_OK or EXIT_USAGE; on EXIT_OK, @c must be freed.
 */
static int load_config(const struct vfioctl *v, struct conf *c,
		       bool missing_ok)
{
	int err = conf_load(c, v->config, stderr);

	if (err == -ENOENT && missing_ok)
		return EXIT_OK;
	conf_report(c);
	if (err) {
		msg_err("%s: %s", v->config, strerror(-err));
		conf_free(c);
		return EXIT_USAGE;
	}
	if (c->errors) {
		msg_err("%s: %d error%s, nothing changed", v->config,
			c->errors, c->errors == 1 ? "" : "s");
		conf_free(c);
		return EXIT_USAGE;
	}
	return EXIT_OK;
}

/*
 * Load the PCI devices.  On failure the configuration @c is freed too
 * when given (the callers hold nothing else yet).  Returns EXIT_OK or
 * EXIT_FAILED; on EXIT_OK, @l must be freed.
 */
static int load_devices(const struct vfioctl *v, struct pci_list *l,
			struct conf *c)
{
	int err = pci_list_load(v, l);

	if (err) {
		msg_err("reading %s/bus/pci/devices: %s", v->sysfs,
			strerror(-err));
		if (c)
			conf_free(c);
		return EXIT_FAILED;
	}
	return EXIT_OK;
}

/* The configuration (missing: empty) and the devices, or neither. */
static int load_all(const struct vfioctl *v, struct conf *c,
		    struct pci_list *l)
{
	int ret = load_config(v, c, true);

	return ret ? ret : load_devices(v, l, c);
}

/* What became of several devices, counted by tally_add(). */
struct tally {
	size_t n, ok, failed, broken, skipped;
	size_t held;	/* of failed: unbind refused, a process holds it */
};

/* The line that says why a device the host uses was not taken. */
static void report_refused(const char *addr, const struct bind_opts *o,
			   bool skipped)
{
	msg_err("%s: %s: in use by the host: %s (force to take it anyway)",
		addr, skipped ? "skipped" : "refused", o->why);
}

/* Count @r in @t; true when the device is where it was asked to go. */
static bool tally_add(struct tally *t, enum bind_result r)
{
	t->n++;
	switch (r) {
	case BIND_OK:
		t->ok++;
		return true;
	case BIND_FAILED:
	case BIND_REFUSED:
		t->failed++;
		break;
	case BIND_RESTORE_FAILED:
		t->broken++;
		break;
	}
	return false;
}

/* The names --class takes: a PCI base class, or base class and subclass. */
static const struct dev_class {
	const char *name;
	unsigned int class;	/* base class << 8 | subclass */
	bool sub;		/* match the subclass too */
} dev_classes[] = {
	{ "storage", 0x0100, false },
	{ "net", 0x0200, false },
	{ "display", 0x0300, false },
	{ "multimedia", 0x0400, false },
	{ "memory", 0x0500, false },
	{ "bridge", 0x0600, false },
	{ "communication", 0x0700, false },
	{ "system", 0x0800, false },
	{ "input", 0x0900, false },
	{ "serial-bus", 0x0c00, false },
	{ "usb", 0x0c03, true },
	{ "wireless", 0x0d00, false },
	{ "crypto", 0x1000, false },
	{ "accelerator", 0x1200, false },
	{ "other", 0xff00, false },
};

static const struct dev_class *find_class(const char *name)
{
	size_t i;

	for (i = 0; i < sizeof(dev_classes) / sizeof(dev_classes[0]); i++)
		if (!strcmp(dev_classes[i].name, name))
			return &dev_classes[i];
	return NULL;
}

static bool class_matches(const struct dev_class *k, const struct pci_dev *d)
{
	unsigned int cls = d->class >> 8;

	return k->sub ? cls == k->class : (cls >> 8) == (k->class >> 8);
}

/* --class with a name that is none of dev_classes[]. */
static int unknown_class(const char *name)
{
	char all[256];
	size_t i, len = 0;

	for (i = 0; i < sizeof(dev_classes) / sizeof(dev_classes[0]); i++)
		len += snprintf(all + len, sizeof(all) - len, "%s%s",
				i ? ", " : "", dev_classes[i].name);
	return msg_usage("--class %s: unknown; one of %s", name, all);
}

/* What list shows of one device. */
struct list_row {
	const struct pci_dev *d;
	const struct pci_name *name;
	bool conf, viable;
	char id[16];		/* vendor:device */
	char net[256];		/* as dev_net_names() gives them */
};

static void list_json(struct json *j, const struct list_row *r)
{
	const struct pci_dev *d = r->d;
	const char *n;

	json_begin_obj(j, NULL);
	json_str(j, "address", d->addr);
	json_str(j, "id", r->id);
	/* As the text shows it: what scripts compare with. */
	json_strf(j, "class", "%06x", d->class);
	json_bool(j, "bridge", pci_dev_is_bridge(d));
	if (d->group >= 0)
		json_int(j, "iommu_group", d->group);
	else
		json_null(j, "iommu_group");
	json_str(j, "driver", d->driver[0] ? d->driver : NULL);
	json_str(j, "driver_override", d->override[0] ? d->override : NULL);
	if (d->group >= 0)
		json_bool(j, "viable", r->viable);
	else
		json_null(j, "viable");
	json_bool(j, "configured", r->conf);
	json_begin_arr(j, "net");
	for (n = r->net; *n; n += strlen(n) + 1)
		json_str(j, NULL, n);
	json_end_arr(j);
	json_str(j, "vendor_name", r->name->vendor[0] ? r->name->vendor : NULL);
	json_str(j, "device_name", r->name->device[0] ? r->name->device : NULL);
	json_end_obj(j);
}

static void list_text(const struct list_row *r)
{
	const struct pci_dev *d = r->d;
	char grp[16], net[sizeof(r->net)];
	const char *n;
	size_t len = 0;

	/* As long as the list: a comma for each NUL but the last. */
	net[0] = '\0';
	for (n = r->net; *n; n += strlen(n) + 1)
		len += snprintf(net + len, sizeof(net) - len, "%s%s",
				len ? "," : "", n);
	snprintf(grp, sizeof(grp), "%d", d->group);
	printf("%-12s  %-9s  %06x  %5s  %-16s  %-6s  %-10s  %-8s  %s%s%s\n",
	       d->addr, r->id, d->class, d->group >= 0 ? grp : "-",
	       d->driver[0] ? d->driver : "-",
	       d->group < 0 ? "-" : r->viable ? "yes" : "no",
	       r->conf ? "yes" : "no", net[0] ? net : "-",
	       r->name->vendor[0] ? r->name->vendor : "-",
	       r->name->device[0] ? " " : "", r->name->device);
}

int cmd_list(const struct vfioctl *v)
{
	const struct dev_class *want = NULL;
	struct pci_name *names;
	struct pci_list l;
	struct conf c;
	struct json j;
	size_t i;
	int ret;

	if (v->class) {
		want = find_class(v->class);
		if (!want)
			return unknown_class(v->class);
	}

	/* list is for looking: a broken config only loses the column. */
	if (conf_load(&c, v->config, stderr) || c.errors) {
		conf_free(&c);
		c.n = 0;
	}
	ret = load_devices(v, &l, &c);
	if (ret)
		return ret;
	names = calloc(l.n ? l.n : 1, sizeof(*names));
	if (!names) {
		msg_err("list: %s", strerror(ENOMEM));
		pci_list_free(&l);
		conf_free(&c);
		return EXIT_FAILED;
	}
	pci_ids_names(v->pci_ids, &l, names);
	if (v->json) {
		json_init(&j, stdout);
		json_begin_arr(&j, NULL);
	} else {
		printf("%-12s  %-9s  %-6s  %5s  %-16s  %-6s  %-10s  %-8s  %s\n",
		       "ADDRESS", "ID", "CLASS", "GROUP", "DRIVER", "VIABLE",
		       "CONFIGURED", "NET", "NAME");
	}
	for (i = 0; i < l.n; i++) {
		struct list_row r = { .d = &l.devs[i], .name = &names[i] };

		if (want && !class_matches(want, r.d))
			continue;
		r.conf = conf_match(&c, r.d) != NULL;
		r.viable = group_viable(&l, r.d->group);
		dev_net_names(v, r.d, r.net, sizeof(r.net));
		snprintf(r.id, sizeof(r.id), "%04x:%04x", r.d->vendor,
			 r.d->device);
		if (v->json)
			list_json(&j, &r);
		else
			list_text(&r);
	}
	if (v->json) {
		json_end_arr(&j);
		json_end(&j);
	}
	free(names);
	pci_list_free(&l);
	conf_free(&c);
	return EXIT_OK;
}

/* Lines that would take a device the host uses: apply will skip them. */
static void warn_in_use(const struct vfioctl *v, struct conf *c,
			const struct plan *p)
{
	char why[512];
	size_t i;

	for (i = 0; i < p->n; i++) {
		const struct target *t = &p->t[i];

		if (t->e->force || !strcmp(t->dev->driver, VFIO_DRIVER) ||
		    !dev_in_use(v, t->dev, why, sizeof(why)))
			continue;
		conf_machine_warn(c, t->e->line,
				  "%s is in use by the host (%s): apply and hotplug will not take it unless the line says force",
				  t->dev->addr, why);
	}
}

/* A mode that lets every user of the machine drive the device's DMA. */
static void warn_world(struct conf *c)
{
	size_t i;

	for (i = 0; i < c->n; i++) {
		const struct conf_entry *e = &c->entries[i];

		if (e->has_mode && (e->mode & 0007))
			conf_warn(c, e->line,
				  "mode=%04o lets every user open the group (world-accessible); give a group= and drop the bits for others",
				  e->mode);
	}
}

void check_warnings(const struct vfioctl *v, struct conf *c,
		    const struct plan *p)
{
	warn_in_use(v, c, p);
	warn_world(c);
}

/*
 * The checks of plain "check" that need this machine: topology and the
 * devices the host uses.  Returns false when the devices could not be
 * read, so that nothing about the machine was checked.
 */
static bool check_machine(const struct vfioctl *v, struct conf *c)
{
	struct pci_list l;
	struct plan p;
	int err;

	err = pci_list_load(v, &l);
	if (err) {
		msg_err("reading %s/bus/pci/devices: %s; the devices were not checked",
			v->sysfs, strerror(-err));
		return false;
	}
	if (plan_build(&p, c, &l, true))
		conf_machine_error(c, 0, "checking the devices: %s",
				   strerror(ENOMEM));
	check_warnings(v, c, &p);
	plan_free(&p);
	pci_list_free(&l);
	return true;
}

/*
 * check's exit status: the file's own errors first (EXIT_USAGE: no
 * machine can apply it), then this machine's (EXIT_DIFFERS: the file is
 * fine, this machine cannot apply it as written), see vfioctl(8).
 */
static int check_status(const struct conf *c, bool machine_read)
{
	if (c->errors > c->machine_errors)
		return EXIT_USAGE;
	if (c->machine_errors || !machine_read)
		return EXIT_DIFFERS;
	return EXIT_OK;
}

/* check's last line, for exit status @ret. */
static void check_say(const struct vfioctl *v, const struct conf *c,
		      int ret)
{
	int file = c->errors - c->machine_errors, here = c->machine_errors;

	if (ret == EXIT_USAGE)
		msg_err("%s: %d error%s in the file%s", v->config, file,
			file == 1 ? "" : "s", here ? ", more on this machine" :
			"");
	else if (here)
		msg_err("%s: the file is valid, but this machine cannot apply it as written: %d error%s",
			v->config, here, here == 1 ? "" : "s");
	else if (ret == EXIT_OK)
		printf("%s: %s, %zu entr%s%s\n", v->config,
		       v->syntax ? "syntax ok" : "ok", c->n,
		       c->n == 1 ? "y" : "ies",
		       v->syntax ? " (this machine not checked)" : "");
}

/*
 * check --json: one object with what the text says, the problems as an
 * array sorted by line (the same CONF_MAX_SHOWN, the rest counted), and
 * nothing on stderr but what is not about a line.  @err: the file could
 * not be read (-errno), then the counts are of what was read.
 */
static void check_json(const struct vfioctl *v, struct conf *c, int err,
		       bool machine_read, int ret)
{
	struct json j;
	size_t i;

	conf_diag_sort(c);
	json_init(&j, stdout);
	json_begin_obj(&j, NULL);
	json_str(&j, "config", v->config);
	json_str(&j, "read_error", err ? strerror(-err) : NULL);
	json_bool(&j, "syntax_only", v->syntax);
	json_bool(&j, "machine_checked", !v->syntax && machine_read && !err);
	json_int(&j, "entries", c->n);
	json_int(&j, "file_errors", c->errors - c->machine_errors);
	json_int(&j, "machine_errors", c->machine_errors);
	json_int(&j, "warnings", c->warnings);
	json_begin_arr(&j, "diagnostics");
	for (i = 0; i < c->ndiag; i++) {
		const struct conf_diag *d = &c->diag[i];

		json_begin_obj(&j, NULL);
		json_int(&j, "line", d->line);
		json_str(&j, "severity", d->warning ? "warning" : "error");
		json_str(&j, "about", d->machine ? "machine" : "file");
		json_str(&j, "message", d->msg);
		json_end_obj(&j);
	}
	json_end_arr(&j);
	json_int(&j, "not_shown", c->hidden_errors + c->hidden_warnings);
	json_int(&j, "exit", ret);
	json_bool(&j, "ok", ret == EXIT_OK);
	json_end_obj(&j);
	json_end(&j);
	/* Said in the object: conf_free() must not print them again. */
	conf_diag_clear(c);
}

int cmd_check(const struct vfioctl *v)
{
	bool machine_read = true;
	struct conf c;
	int ret, err;

	err = conf_load_flags(&c, v->config, stderr,
			      v->syntax ? CONF_SYNTAX : 0);
	if (err) {
		if (v->json) {
			check_json(v, &c, err, false, EXIT_USAGE);
		} else {
			conf_report(&c);
			msg_err("%s: %s", v->config, strerror(-err));
		}
		conf_free(&c);
		return EXIT_USAGE;
	}
	/* The file's errors are reported even when sysfs cannot be read. */
	if (!v->syntax)
		machine_read = check_machine(v, &c);
	/* check_warnings() has said it when the machine was checked. */
	if (v->syntax || !machine_read)
		warn_world(&c);
	ret = check_status(&c, machine_read);
	if (v->json) {
		check_json(v, &c, 0, machine_read, ret);
	} else {
		conf_report(&c);
		check_say(v, &c, ret);
	}
	conf_free(&c);
	return ret;
}

/*
 * A group's node in class vfio: the seed ABI's "pci:N" or today's "N";
 * the udev rules give both the same owner.
 */
static bool is_group_node(const char *name)
{
	if (!strncmp(name, "pci:", 4))
		name += 4;
	if (!*name)
		return false;
	for (; *name; name++)
		if (*name < '0' || *name > '9')
			return false;
	return true;
}

/*
 * Ask udev to apply the rules to every group node again, as "udevadm
 * trigger --action=change" does: configured or not, so that a node whose
 * line was edited or removed loses what it no longer may have.
 */
static void retrigger_nodes(const struct vfioctl *v)
{
	char dir[4096], path[4400];
	struct dirent *de;
	struct stat st;
	DIR *d;
	int err;

	if (!sysfs_path(v, dir, sizeof(dir), "class/vfio"))
		return;
	d = opendir(dir);
	if (!d) {
		if (errno != ENOENT)
			msg_err("reading %s: %s", dir, strerror(errno));
		return;
	}
	while ((de = readdir(d))) {
		if (!is_group_node(de->d_name))
			continue;
		snprintf(path, sizeof(path), "%s/%s/uevent", dir, de->d_name);
		if (stat(path, &st))
			continue;
		err = sysfs_write(path, "change");
		if (err)
			msg_err("%s: asking udev to update its node: %s",
				de->d_name, strerror(-err));
	}
	closedir(d);
}

static const char *result_word(const struct bind_opts *o)
{
	if (o->already)
		return "already bound to vfio";
	if (o->pending)
		return "reserved for vfio, waiting for the driver to load";
	return "bound to vfio";
}

/* The line that says where a device bound by dev_bind() came from. */
static void report_bound(const struct vfioctl *v, const char *addr,
			 const struct bind_opts *o)
{
	if (o->prev[0] && !o->already)
		msg_info(v, "%s: %s (was %s)", addr, result_word(o), o->prev);
	else
		msg_info(v, "%s: %s", addr, result_word(o));
}

/* The group nodes "apply" would send "change" to. */
static size_t count_nodes(const struct vfioctl *v)
{
	char dir[4096];
	struct dirent *de;
	size_t n = 0;
	DIR *d;

	if (!sysfs_path(v, dir, sizeof(dir), "class/vfio"))
		return 0;
	d = opendir(dir);
	if (!d)
		return 0;
	while ((de = readdir(d)))
		n += is_group_node(de->d_name);
	closedir(d);
	return n;
}

/*
 * apply --dry-run: the decisions apply would take, from the same checks,
 * one line per device, and nothing written anywhere.
 */
static int apply_dry_run(const struct vfioctl *v, const struct conf *c,
			 const struct pci_list *l, const struct plan *p)
{
	size_t i, bind = 0, fail = 0, skip = 0;
	char why[512];

	for (i = 0; i < c->n; i++) {
		const struct conf_entry *e = &c->entries[i];

		if (e->kind == CONF_ADDR && !pci_list_find(l, e->addr)) {
			printf("%s: would fail: not present\n", e->addr);
			fail++;
		}
	}
	for (i = 0; i < p->n; i++) {
		const struct pci_dev *d = p->t[i].dev;
		const struct conf_entry *e = p->t[i].e;

		if (!strcmp(d->driver, VFIO_DRIVER)) {
			printf("%s: already bound to vfio\n", d->addr);
			bind++;
		} else if (!v->force && !e->force &&
			   dev_in_use(v, d, why, sizeof(why))) {
			printf("%s: would %s: in use by the host: %s\n",
			       d->addr, e->kind == CONF_ID ? "skip" : "refuse",
			       why);
			if (e->kind == CONF_ID)
				skip++;
			else
				fail++;
		} else if (d->group < 0) {
			printf("%s: would fail: no IOMMU group\n", d->addr);
			fail++;
		} else if (!vfio_driver_loaded(v)) {
			printf("%s: would fail: the vfio driver is not loaded\n",
			       d->addr);
			fail++;
		} else {
			printf("%s: would bind to vfio (was %s)\n", d->addr,
			       d->driver[0] ? d->driver : "no driver");
			bind++;
		}
	}
	printf("apply --dry-run: %zu would be bound, %zu would fail, %zu would be skipped, %zu group node%s would be updated; nothing changed\n",
	       bind, fail, skip, count_nodes(v),
	       count_nodes(v) == 1 ? "" : "s");
	return fail ? EXIT_PARTIAL : EXIT_OK;
}

int cmd_apply(const struct vfioctl *v)
{
	struct tally t = { 0 };
	struct pci_list l;
	struct plan p;
	struct conf c;
	size_t i;
	int ret, err;

	ret = load_config(v, &c, true);
	if (ret)
		return ret;
	if (!c.n) {
		msg_info(v, "%s: no devices configured", v->config);
		conf_free(&c);
		retrigger_nodes(v);
		return EXIT_OK;
	}
	ret = load_devices(v, &l, &c);
	if (ret)
		return ret;
	err = plan_build(&p, &c, &l, false);
	conf_report(&c);
	if (err || c.errors) {
		msg_err("%s: not applied, nothing changed", v->config);
		ret = EXIT_USAGE;
		goto out;
	}
	if (v->dry_run) {
		ret = apply_dry_run(v, &c, &l, &p);
		goto out;
	}
	/* Absent devices were warned about; they count as failures. */
	for (i = 0; i < c.n; i++) {
		const struct conf_entry *e = &c.entries[i];

		if (e->kind == CONF_ADDR && !pci_list_find(&l, e->addr))
			t.failed++;
	}
	for (i = 0; i < p.n; i++) {
		const struct pci_dev *d = p.t[i].dev;
		const struct conf_entry *e = p.t[i].e;
		struct bind_opts o = { .force = v->force || e->force };
		enum bind_result r = dev_bind(v, d->addr, &o);

		/*
		 * A vendor:device line stands for devices nobody looked at
		 * one by one: one the host uses is skipped, not a failure,
		 * so the host's own NIC of the same model keeps working and
		 * the boot does not fail.  An address line was meant.
		 */
		if (r == BIND_REFUSED && e->kind == CONF_ID) {
			report_refused(d->addr, &o, true);
			t.skipped++;
			continue;
		}
		if (r == BIND_REFUSED)
			report_refused(d->addr, &o, false);
		if (tally_add(&t, r))
			report_bound(v, d->addr, &o);
	}
	retrigger_nodes(v);
	printf("apply: %zu bound, %zu failed", t.ok, t.failed + t.broken);
	if (t.skipped)
		printf(", %zu skipped (in use by the host)", t.skipped);
	printf("%s\n", t.broken ? ", some could not be restored" : "");
	ret = t.broken ? EXIT_RESTORE : t.failed ? EXIT_PARTIAL : EXIT_OK;
out:
	plan_free(&p);
	pci_list_free(&l);
	conf_free(&c);
	return ret;
}

/* Results of several devices: 0, the single code, or partial. */
static int combine(const struct tally *t)
{
	if (t->broken)
		return EXIT_RESTORE;
	if (t->held)
		return EXIT_HELD;
	if (t->ok == t->n)
		return EXIT_OK;
	return t->n == 1 || !t->ok ? EXIT_FAILED : EXIT_PARTIAL;
}

/*
 * A device named on the command line: a PCI address, or a network
 * interface (/sys/class/net/IF/device), as driverctl and dpdk-devbind
 * take them.  Returns false (and says why) when it is neither.
 */
bool resolve_device(const struct vfioctl *v, const char *arg,
		    char addr[PCI_ADDR_SIZE])
{
	char path[4096], real[PATH_MAX];
	const char *base;

	if (parse_pci_addr(arg, addr))
		return true;
	if (!*arg || strchr(arg, '/') || !strcmp(arg, ".") ||
	    !strcmp(arg, "..") || strlen(arg) > 64 ||
	    !sysfs_path(v, path, sizeof(path), "class/net/%s/device", arg)) {
		msg_err("%s: not a PCI address (like 0000:03:00.0) or a network interface",
			arg);
		return false;
	}
	if (!realpath(path, real)) {
		msg_err("%s: not a PCI address (like 0000:03:00.0) or a network interface: %s: %s",
			arg, path, strerror(errno));
		return false;
	}
	base = strrchr(real, '/');
	base = base ? base + 1 : real;
	if (!parse_pci_addr(base, addr) || strcmp(addr, base)) {
		msg_err("%s: network interface of %s, which is not a PCI device",
			arg, base);
		return false;
	}
	return true;
}

/* An option word of "bind --save": key=value or force. */
static bool is_option_word(const char *s)
{
	return strchr(s, '=') || !strcmp(s, "force");
}

/* After unbind --save: a vendor:device line still takes @addr at boot. */
static void warn_still_matched(const struct vfioctl *v, const char *addr)
{
	const struct conf_entry *e;
	struct pci_dev d;
	struct conf c;

	if (conf_load(&c, v->config, stderr) || c.errors ||
	    pci_dev_load(v, addr, &d)) {
		conf_free(&c);
		return;
	}
	e = conf_match(&c, &d);
	if (e)
		msg_err("%s: still matched by %04x:%04x at %s:%d, which the next apply or hotplug binds again",
			addr, e->vendor, e->device, v->config, e->line);
	conf_free(&c);
}

/*
 * One device of bind or unbind (@bind false), counted in @t; with --save,
 * its line of the configuration, @opts for bind, goes in or out with it.
 */
static void move_device(const struct vfioctl *v, const char *addr, bool bind,
			const char *opts, struct tally *t)
{
	struct conf_edit ed = { .path = v->config };
	struct bind_opts o = { .force = v->force };
	enum bind_result r;
	int err;

	if (v->save) {
		err = conf_edit_prepare(&ed, addr, bind ? opts : NULL);
		if (err) {
			msg_err("%s: %s: %s; not saved, device not moved",
				addr, v->config, err == -EINVAL ?
				"the edited file would be invalid" :
				strerror(-err));
			t->n++;
			t->failed++;
			return;
		}
	}
	r = bind ? dev_bind(v, addr, &o) : dev_unbind(v, addr);
	if (r == BIND_REFUSED && bind)
		report_refused(addr, &o, false);
	else if (r == BIND_REFUSED)	/* unbind said who holds it */
		t->held++;
	if (!tally_add(t, r)) {
		conf_edit_abort(&ed);
		return;
	}
	if (bind)
		report_bound(v, addr, &o);
	else
		msg_info(v, "%s: given back", addr);
	if (!v->save)
		return;
	err = conf_edit_commit(&ed);
	if (err) {
		msg_err("%s: saving %s: %s", addr, v->config, strerror(-err));
		t->ok--;
		t->failed++;
		return;
	}
	msg_info(v, "%s: %s %s", addr, bind ? "saved in" : "removed from",
		 v->config);
	if (!bind)
		warn_still_matched(v, addr);
}

/* bind and unbind: each device named on the command line in turn. */
static int move_devices(const struct vfioctl *v, int argc, char **argv,
			bool bind)
{
	const char *cmd = bind ? "bind" : "unbind";
	char (*addrs)[PCI_ADDR_SIZE], opts[CONF_MAX_LINE] = "";
	struct tally t = { 0 };
	int i, n = 0, ret = EXIT_USAGE;
	size_t len = 0;

	addrs = calloc(argc > 0 ? argc : 1, sizeof(*addrs));
	if (!addrs) {
		msg_err("%s: %s", cmd, strerror(ENOMEM));
		return EXIT_FAILED;
	}
	for (i = 0; i < argc; i++) {
		if (!is_option_word(argv[i])) {
			if (!resolve_device(v, argv[i], addrs[n++]))
				goto out;
			continue;
		}
		if (!bind || !v->save) {
			msg_err("%s: options only go with bind --save", argv[i]);
			goto out;
		}
		if (len + strlen(argv[i]) + 2 > sizeof(opts)) {
			msg_err("options too long for one devices.conf line");
			goto out;
		}
		len += snprintf(opts + len, sizeof(opts) - len, "%s%s",
				len ? " " : "", argv[i]);
	}
	if (!n) {
		msg_err("%s needs at least one PCI address", cmd);
		goto out;
	}
	for (i = 0; i < n; i++)
		move_device(v, addrs[i], bind, opts, &t);
	ret = combine(&t);
out:
	free(addrs);
	return ret;
}

int cmd_bind(const struct vfioctl *v, int argc, char **argv)
{
	return move_devices(v, argc, argv, true);
}

int cmd_unbind(const struct vfioctl *v, int argc, char **argv)
{
	return move_devices(v, argc, argv, false);
}

/* State of devices that left the bus: nothing to give back any more. */
static void forget_absent(const struct vfioctl *v)
{
	struct dirent *de;
	char addr[PCI_ADDR_SIZE];
	struct pci_dev d;
	DIR *dir;

	dir = opendir(v->state_dir);
	if (!dir)
		return;
	while ((de = readdir(dir))) {
		char *dot = strrchr(de->d_name, '.');

		if (!dot || strcmp(dot, ".driver") ||
		    (size_t)(dot - de->d_name) >= sizeof(addr))
			continue;
		memcpy(addr, de->d_name, dot - de->d_name);
		addr[dot - de->d_name] = '\0';
		if (parse_pci_addr(addr, d.addr) &&
		    pci_dev_load(v, addr, &d) == -ENODEV)
			dev_unbind(v, addr);
	}
	closedir(dir);
}

int cmd_unbind_all(const struct vfioctl *v)
{
	struct tally t = { 0 };
	struct pci_list l;
	size_t i;
	int ret;

	ret = load_devices(v, &l, NULL);
	if (ret)
		return ret;
	/*
	 * All or none: the package's removal stops on a held device, and
	 * then leaves every device where it was.
	 */
	for (i = 0; !v->force && i < l.n; i++)
		if (!strcmp(l.devs[i].driver, VFIO_DRIVER) &&
		    unbind_refused(v, &l.devs[i]))
			t.held++;
	if (t.held) {
		pci_list_free(&l);
		return EXIT_HELD;
	}
	for (i = 0; i < l.n; i++) {
		const struct pci_dev *d = &l.devs[i];

		if (strcmp(d->driver, VFIO_DRIVER) &&
		    strcmp(d->override, VFIO_DRIVER) &&
		    !state_exists(v, d->addr))
			continue;
		if (tally_add(&t, dev_unbind(v, d->addr)))
			msg_info(v, "%s: given back", d->addr);
	}
	pci_list_free(&l);
	forget_absent(v);
	if (!t.n)
		return EXIT_OK;
	if (t.broken)
		return EXIT_RESTORE;
	return t.ok == t.n ? EXIT_OK : EXIT_PARTIAL;
}

/* The node of @group as it is now; false when there is none. */
static bool node_stat(const struct vfioctl *v, int group, struct stat *st,
		      char *path, size_t size)
{
	snprintf(path, size, "%s/pci:%d", v->dev_dir, group);
	return !stat(path, st);
}

/* How a node compares with what it should have. */
enum node_state { NODE_OK, NODE_DIFFERS, NODE_WIDER };

static const char *const node_words[] = { "ok", "DIFFERS", "WIDER" };

static enum node_state node_compare(const struct conf_entry *own,
				    const struct stat *st)
{
	if (ownership_wider(own, st))
		return NODE_WIDER;
	if ((st->st_mode & 07777) != own->mode)
		return NODE_DIFFERS;
	return NODE_OK;
}

/* What status found out about one device. */
struct status_row {
	const struct pci_dev *d;
	const struct conf_entry *e;	/* its line, NULL: bound by hand */
	struct conf_entry own;		/* what its node should be */
	char want[256];			/* the configured part of it */
	bool have_own;			/* the group's devices agree */
	bool bound, have_node, viable, ok;
	enum node_state ns;
	struct stat st;			/* the node, when have_node */
	char node[4200];
};

static void status_json(struct json *j, const struct status_row *r)
{
	json_begin_obj(j, NULL);
	json_str(j, "address", r->d->addr);
	if (r->e)
		json_int(j, "line", r->e->line);
	else
		json_null(j, "line");
	json_bool(j, "configured", r->e != NULL);
	if (r->d->group >= 0)
		json_int(j, "iommu_group", r->d->group);
	else
		json_null(j, "iommu_group");
	json_str(j, "driver", r->d->driver[0] ? r->d->driver : NULL);
	json_bool(j, "bound", r->bound);
	json_bool(j, "viable", r->viable);
	json_begin_obj(j, "want");
	json_str(j, "owner", r->own.owner);
	json_str(j, "group", r->own.group);
	json_int(j, "uid", r->own.uid);
	json_int(j, "gid", r->own.gid);
	/* Modes as the text shows them, in octal: what scripts compare. */
	json_strf(j, "mode", "%04o", r->own.mode);
	json_bool(j, "agreed", r->have_own);
	json_end_obj(j);
	if (r->have_node) {
		json_begin_obj(j, "node");
		json_str(j, "path", r->node);
		json_int(j, "uid", r->st.st_uid);
		json_int(j, "gid", r->st.st_gid);
		json_strf(j, "mode", "%04o", r->st.st_mode & 07777);
		json_end_obj(j);
	} else {
		json_null(j, "node");
	}
	json_bool(j, "wider", r->ns == NODE_WIDER);
	json_str(j, "state", !r->ok && r->ns == NODE_OK ? "DIFFERS" :
		 node_words[r->ns]);
	json_bool(j, "ok", r->ok);
	json_end_obj(j);
}

static void status_text(const struct vfioctl *v, const struct status_row *r)
{
	const struct pci_dev *d = r->d;
	char group[128], why[96];

	if (d->group >= 0) {
		snprintf(group, sizeof(group), "%d", d->group);
	} else {
		no_group_why(v, why, sizeof(why));
		snprintf(group, sizeof(group), "none (%s)", why);
	}
	if (r->e)
		printf("%s  line %d  group %s  driver %s  %s", d->addr,
		       r->e->line, group, d->driver[0] ? d->driver : "-",
		       !r->ok && r->ns == NODE_OK ? "DIFFERS" :
		       node_words[r->ns]);
	else
		printf("%s  not configured  group %s  driver vfio  (bound by hand)  %s",
		       d->addr, group, node_words[r->ns]);
	if (r->e && !r->bound)
		printf(" (want vfio)");
	if (r->have_node)
		printf("  %s %u:%u %04o", r->node, (unsigned int)r->st.st_uid,
		       (unsigned int)r->st.st_gid, r->st.st_mode & 07777);
	else if (r->bound)
		printf("  no node in %s", v->dev_dir);
	printf("  (want %s%s%s:%s %04o)", r->want, r->want[0] ? ", i.e. " : "",
	       r->own.owner, r->own.group, r->own.mode);
	if (!r->have_own)
		printf("  (devices of the group disagree: root only)");
	printf("\n");
}

/*
 * One line (or JSON object) of status for @d, configured by @e or bound
 * by hand (@e NULL).  Returns true when it is as it should be: bound to
 * vfio when configured, and its node, if any, exactly as configured
 * (unconfigured fields: root:root 0600), never wider.
 */
static bool status_entry(const struct vfioctl *v, const struct conf *c,
			 const struct pci_list *l, const struct pci_dev *d,
			 const struct conf_entry *e, struct json *j)
{
	struct status_row r = {
		.d = d,
		.e = e,
		.bound = !strcmp(d->driver, VFIO_DRIVER),
		.viable = group_viable(l, d->group),
		.ns = NODE_OK,
	};

	/* Disagreeing devices: udev-owner fails and the node stays root's. */
	r.have_own = group_ownership(c, l, d->group, &r.own);
	conf_entry_describe(&r.own, r.want, sizeof(r.want));
	ownership_fill_defaults(&r.own);
	if (d->group >= 0)
		r.have_node = node_stat(v, d->group, &r.st, r.node,
					sizeof(r.node));
	if (r.have_node)
		r.ns = node_compare(&r.own, &r.st);
	else if (r.bound)
		r.ns = NODE_DIFFERS;
	r.ok = (r.bound || !e) && r.ns == NODE_OK;
	if (j)
		status_json(j, &r);
	else
		status_text(v, &r);
	return r.ok;
}

/* A device of @group was reported by status already. */
static bool group_reported(const struct conf *c, const struct pci_list *l,
			   int group)
{
	size_t i;

	for (i = 0; i < l->n; i++)
		if (l->devs[i].group == group &&
		    (conf_match(c, &l->devs[i]) ||
		     !strcmp(l->devs[i].driver, VFIO_DRIVER)))
			return true;
	return false;
}

/*
 * Nodes in the device directory that no reported device accounts for
 * (a group whose configuration was removed, a node left by hand): each
 * must be root:root 0600 at most.  Returns false when one is wider.
 */
static bool status_other_nodes(const struct vfioctl *v, const struct conf *c,
			       const struct pci_list *l, struct json *j)
{
	struct conf_entry own;
	char path[4200];
	struct dirent *de;
	struct stat st;
	bool ok = true;
	long group;
	char *end;
	DIR *dir;

	dir = opendir(v->dev_dir);
	if (!dir)
		return true;
	while ((de = readdir(dir))) {
		if (strncmp(de->d_name, "pci:", 4))
			continue;
		errno = 0;
		group = strtol(de->d_name + 4, &end, 10);
		if (!de->d_name[4] || *end || errno || group < 0 ||
		    group > 0x7fffffff || group_reported(c, l, (int)group))
			continue;
		snprintf(path, sizeof(path), "%s/%s", v->dev_dir, de->d_name);
		if (stat(path, &st))
			continue;
		group_ownership(c, l, (int)group, &own);
		ownership_fill_defaults(&own);
		if (!ownership_wider(&own, &st))
			continue;
		ok = false;
		if (j) {
			json_begin_obj(j, NULL);
			json_str(j, "path", path);
			json_int(j, "iommu_group", group);
			json_int(j, "uid", st.st_uid);
			json_int(j, "gid", st.st_gid);
			json_strf(j, "mode", "%04o", st.st_mode & 07777);
			json_bool(j, "wider", true);
			json_end_obj(j);
		} else {
			printf("%s  no configured or bound device  WIDER  %u:%u %04o  (want %s:%s %04o)\n",
			       path, (unsigned int)st.st_uid,
			       (unsigned int)st.st_gid, st.st_mode & 07777,
			       own.owner, own.group, own.mode);
		}
	}
	closedir(dir);
	return ok;
}

int cmd_status(const struct vfioctl *v)
{
	bool differs = false;
	struct json js, *j = NULL;
	struct pci_list l;
	struct plan p;
	struct conf c;
	size_t i;
	int ret, err;

	ret = load_all(v, &c, &l);
	if (ret)
		return ret;
	err = plan_build(&p, &c, &l, false);
	conf_report(&c);
	if (err) {
		ret = EXIT_FAILED;
		goto out;
	}
	if (v->json) {
		j = &js;
		json_init(j, stdout);
		json_begin_obj(j, NULL);
		json_str(j, "config", v->config);
		json_int(j, "entries", c.n);
		json_begin_arr(j, "devices");
	} else if (!c.n) {
		printf("%s: no devices configured\n", v->config);
	}
	for (i = 0; i < p.n; i++)
		if (!status_entry(v, &c, &l, p.t[i].dev, p.t[i].e, j))
			differs = true;
	/* Devices on vfio that the configuration does not mention. */
	for (i = 0; i < l.n; i++) {
		const struct pci_dev *d = &l.devs[i];

		if (strcmp(d->driver, VFIO_DRIVER) || conf_match(&c, d))
			continue;
		if (!status_entry(v, &c, &l, d, NULL, j))
			differs = true;
	}
	if (j) {
		json_end_arr(j);
		json_begin_arr(j, "other_nodes");
	}
	if (!status_other_nodes(v, &c, &l, j))
		differs = true;
	if (j) {
		json_end_arr(j);
		json_bool(j, "ok", !differs);
		json_end_obj(j);
		json_end(j);
	}
	ret = differs ? EXIT_DIFFERS : EXIT_OK;
out:
	plan_free(&p);
	pci_list_free(&l);
	conf_free(&c);
	return ret;
}

/*
 * udev IMPORT{program} helper for a /dev/vfio/pci:N node: prints the
 * ownership as VFIO_OWNER=, VFIO_GROUP=, VFIO_MODE= lines, the
 * configured fields merged over root:root 0600.  Any doubt prints nothing
 * and fails, which udev treats as "import nothing"; the rule has already
 * set root:root 0600 and cleared the old values: fail closed.
 */
int cmd_udev_owner(const struct vfioctl *v, int argc, char **argv)
{
	const char *name;
	struct conf_entry own;
	struct pci_list l;
	struct conf c;
	long group;
	char *end;
	int ret;

	if (argc != 1) {
		msg_err("udev-owner needs one group (pci:N or N)");
		return EXIT_USAGE;
	}
	name = argv[0];
	if (!strncmp(name, "pci:", 4))
		name += 4;
	errno = 0;
	group = strtol(name, &end, 10);
	if (!*name || *end || errno || group < 0 || group > 0x7fffffff) {
		msg_err("%s: not a group name (pci:N)", argv[0]);
		return EXIT_USAGE;
	}
	ret = load_all(v, &c, &l);
	if (ret)
		return ret;
	if (!group_ownership(&c, &l, (int)group, &own)) {
		ret = EXIT_USAGE;
		goto out;
	}
	/*
	 * All three, always: udev keeps a device's imported properties
	 * across "change" events, so a field left out would keep whatever
	 * an older configuration gave the node.
	 */
	ownership_fill_defaults(&own);
	printf("VFIO_OWNER=%s\nVFIO_GROUP=%s\nVFIO_MODE=%04o\n", own.owner,
	       own.group, own.mode);
out:
	pci_list_free(&l);
	conf_free(&c);
	return ret;
}

/*
 * udev helper for a PCI "add" event: when the configuration names the
 * device, move it onto vfio right away (before a host driver module is
 * loaded by the later 80-drivers.rules, or away from one built in).
 * Prints VFIO_CLAIMED=1, and VFIO_LOAD=1 when the vfio driver still has to
 * be loaded (the rule does that; the override then makes it bind).
 */
int cmd_udev_claim(const struct vfioctl *v, int argc, char **argv)
{
	struct bind_opts o = { .claim = true };
	const struct conf_entry *e;
	struct pci_dev d;
	struct conf c;
	char addr[PCI_ADDR_SIZE];
	int ret, err;

	if (argc != 1 || !parse_pci_addr(argv[0], addr)) {
		msg_err("udev-claim needs one PCI address");
		return EXIT_USAGE;
	}
	ret = load_config(v, &c, true);
	if (ret)
		return ret;
	err = pci_dev_load(v, addr, &d);
	if (err) {
		msg_err("%s: %s", addr, strerror(-err));
		conf_free(&c);
		return EXIT_FAILED;
	}
	e = conf_match(&c, &d);
	if (!e) {
		conf_free(&c);
		return EXIT_OK;
	}
	o.force = v->force || e->force;
	switch (dev_bind(v, addr, &o)) {
	case BIND_REFUSED:
		report_refused(addr, &o, e->kind == CONF_ID);
		ret = EXIT_FAILED;
		break;
	case BIND_OK:
		printf("VFIO_CLAIMED=1\n");
		if (o.pending)
			printf("VFIO_LOAD=1\n");
		ret = EXIT_OK;
		break;
	case BIND_FAILED:
		ret = EXIT_FAILED;
		break;
	default:
		ret = EXIT_RESTORE;
		break;
	}
	conf_free(&c);
	return ret;
}
