// SPDX-License-Identifier: GPL-2.0-only
/*
 * The boot path of apply (vfio-bind.service): nothing at all when the
 * configuration names no device, so that an installed but unused package
 * neither loads nor taints; otherwise wait for udev to have seen exactly
 * the devices it selects, not for the whole udev queue, and load the vfio
 * driver.  See boot.h.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "boot.h"
#include "config.h"
#include "plan.h"
#include "sysfs.h"

/* How often the udev database is looked at while waiting. */
#define WAIT_POLL_NS	(50 * 1000 * 1000L)

/* The devices the configuration selects, each with its udev state. */
struct selection {
	struct sel_dev {
		char addr[PCI_ADDR_SIZE];
		bool ready;
	} *devs;
	size_t n;
};

static int sel_add(struct selection *s, size_t cap, const char *addr)
{
	if (s->n == cap)
		return -ENOMEM;
	snprintf(s->devs[s->n].addr, sizeof(s->devs[s->n].addr), "%s", addr);
	s->devs[s->n].ready = false;
	s->n++;
	return 0;
}

/*
 * Every present device an entry names (conf_match(), as apply binds
 * them), and every address entry whose device is not present (yet): it
 * may be about to appear.  A vendor:device entry stands for no device
 * until one is present.
 */
static int select_devices(const struct conf *c, const struct pci_list *l,
			  struct selection *s)
{
	size_t i, cap = l->n + c->n;
	int err = 0;

	s->n = 0;
	s->devs = calloc(cap ? cap : 1, sizeof(*s->devs));
	if (!s->devs)
		return -ENOMEM;
	for (i = 0; i < l->n && !err; i++)
		if (conf_match(c, &l->devs[i]))
			err = sel_add(s, cap, l->devs[i].addr);
	for (i = 0; i < c->n && !err; i++) {
		const struct conf_entry *e = &c->entries[i];

		if (e->kind == CONF_ADDR && !pci_list_find(l, e->addr))
			err = sel_add(s, cap, e->addr);
	}
	if (err) {
		free(s->devs);
		s->devs = NULL;
		s->n = 0;
	}
	return err;
}

/* The entry udev writes once it has processed @addr ("udevadm wait"). */
static bool udev_entry(const struct vfioctl *v, const char *addr, char *buf,
		       size_t size)
{
	int n = snprintf(buf, size, "%s/+pci:%s", v->udev_data, addr);

	return n >= 0 && (size_t)n < size;
}

static bool udev_ready(const struct vfioctl *v, const char *addr)
{
	char path[4096];
	struct stat st;

	return udev_entry(v, addr, path, sizeof(path)) && !stat(path, &st);
}

static long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/*
 * Wait, v->wait seconds for all of them together, until udev has
 * processed each device of @s; then one line for each it has not.
 */
static void wait_for_udev(const struct vfioctl *v, struct selection *s)
{
	long long deadline = now_ns() + v->wait * 1000000000LL;
	struct timespec poll = { 0, WAIT_POLL_NS };
	char path[4096];
	size_t i, left;

	for (;;) {
		left = 0;
		for (i = 0; i < s->n; i++) {
			if (!s->devs[i].ready)
				s->devs[i].ready = udev_ready(v, s->devs[i].addr);
			left += !s->devs[i].ready;
		}
		if (!left || now_ns() >= deadline)
			break;
		nanosleep(&poll, NULL);
	}
	for (i = 0; i < s->n; i++) {
		if (s->devs[i].ready)
			continue;
		if (!udev_entry(v, s->devs[i].addr, path, sizeof(path)))
			snprintf(path, sizeof(path), "its udev entry");
		msg_err("%s: not processed by udev after %d s (no %s); going on without it",
			s->devs[i].addr, v->wait, path);
	}
}

/*
 * "modprobe -q vfio_pci", as the unit used to run it.  A failure is said
 * and is not fatal: apply reports the missing driver for each device.
 */
static void load_module(const struct vfioctl *v)
{
	char *const argv[] = { (char *)v->modprobe, "-q", BOOT_MODULE, NULL };
	int status;
	pid_t pid;

	/* The child must not write out our buffered lines a second time. */
	fflush(NULL);
	pid = fork();
	if (pid < 0) {
		msg_err("running %s -q %s: %s", v->modprobe, BOOT_MODULE,
			strerror(errno));
		return;
	}
	if (!pid) {
		execvp(argv[0], argv);
		msg_err("running %s -q %s: %s", v->modprobe, BOOT_MODULE,
			strerror(errno));
		_exit(127);
	}
	while (waitpid(pid, &status, 0) < 0) {
		if (errno != EINTR) {
			msg_err("waiting for %s -q %s: %s", v->modprobe,
				BOOT_MODULE, strerror(errno));
			return;
		}
	}
	if (WIFEXITED(status) && WEXITSTATUS(status) == 127)
		return;		/* the child has said why */
	if (WIFEXITED(status) && WEXITSTATUS(status))
		msg_err("%s -q %s exited %d; the devices cannot be bound until the vfio driver loads",
			v->modprobe, BOOT_MODULE, WEXITSTATUS(status));
	else if (WIFSIGNALED(status))
		msg_err("%s -q %s was killed by signal %d", v->modprobe,
			BOOT_MODULE, WTERMSIG(status));
}

int apply_prepare(const struct vfioctl *v, bool *done)
{
	struct selection s = { 0 };
	struct pci_list l;
	struct conf c;
	int err;

	*done = true;
	err = conf_load(&c, v->config, stderr);
	conf_report(&c);
	if (err && err != -ENOENT) {
		msg_err("%s: %s", v->config, strerror(-err));
		conf_free(&c);
		return EXIT_USAGE;
	}
	if (c.errors) {
		msg_err("%s: %d error%s, nothing changed", v->config, c.errors,
			c.errors == 1 ? "" : "s");
		conf_free(&c);
		return EXIT_USAGE;
	}
	if (!c.n && v->boot) {
		msg_info(v, "%s: no devices configured, nothing to do",
			 v->config);
		conf_free(&c);
		return EXIT_OK;
	}
	err = pci_list_load(v, &l);
	if (err) {
		msg_err("reading %s/bus/pci/devices: %s", v->sysfs,
			strerror(-err));
		conf_free(&c);
		return EXIT_FAILED;
	}
	err = select_devices(&c, &l, &s);
	pci_list_free(&l);
	conf_free(&c);
	if (err) {
		msg_err("%s: %s", v->config, strerror(-err));
		return EXIT_FAILED;
	}
	if (s.n && v->wait > 0)
		wait_for_udev(v, &s);
	/*
	 * Only vendor:device lines that match no present device: no module
	 * (the udev rule loads it when such a device is plugged in).
	 */
	if (s.n && v->boot)
		load_module(v);
	free(s.devs);
	*done = false;
	return EXIT_OK;
}
