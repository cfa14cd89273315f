// SPDX-License-Identifier: GPL-2.0-only
/*
 * vfioctl doctor.  The host first (IOMMU, interrupt remapping, our
 * modules, the in-tree block, Secure Boot, devices.conf), then each
 * device (its group and why it is shaped so, host use, reset, MSI, the
 * configured owner's RLIMIT_MEMLOCK and its nodes).  Each check adds to
 * one table of findings, printed at the end.  Everything is read below
 * v->sysfs, v->proc, v->dev_dir and v->root so that the host tests can
 * fake it; dkms, mokutil and modinfo are run from $PATH when present.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <linux/pci_regs.h>

#include "commands.h"
#include "config.h"
#include "doctor.h"
#include "inuse.h"
#include "json.h"
#include "plan.h"
#include "sysfs.h"

extern char **environ;

#define SECUREBOOT_VAR "SecureBoot-8be4df61-93ca-11d2-aa0d-00e098032b8c"
#define MODSIG_MAGIC "~Module signature appended~\n"
#define DKMS_MOK_CERT "/var/lib/dkms/mok.pub"
#define KERNEL_VFIO_VERSION "0.3"	/* the in-tree core's MODULE_VERSION */
#define SYSTEMD_MEMLOCK (8ULL << 20)	/* systemd's DefaultLimitMEMLOCK */
#define TYPICAL_MEMLOCK (1ULL << 30)	/* without --memlock-for: a small VM */
#define MEMLOCK_UNLIMITED (~0ULL)

/* The kernel's bound on a capability list walk (drivers/pci/pci.c). */
#define PCI_FIND_CAP_TTL	48

struct doctor {
	const struct vfioctl *v;
	struct findings t;
	struct finding scratch;		/* where findings go when out of memory */
	struct pci_list l;
	struct conf c;			/* its entries, even with errors */
	char kver[128];
	char vfio_ko[4096];		/* our vfio.ko for kver, "" if none */
	bool iommu;
};

static const char *const verdict_names[] = { "ok", "warn", "fail" };

static struct finding *add(struct doctor *d, enum verdict verdict,
			   const char *check, const char *subject,
			   const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));
static void fix(struct finding *f, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static struct finding *add(struct doctor *d, enum verdict verdict,
			   const char *check, const char *subject,
			   const char *fmt, ...)
{
	struct finding *f = &d->scratch;
	va_list ap;

	if (d->t.n == d->t.cap) {
		size_t cap = d->t.cap ? d->t.cap * 2 : 32;
		struct finding *n = realloc(d->t.f, cap * sizeof(*n));

		if (n) {
			d->t.f = n;
			d->t.cap = cap;
		}
	}
	if (d->t.n < d->t.cap)
		f = &d->t.f[d->t.n++];
	else
		msg_err("doctor: %s: out of memory, finding lost", check);
	memset(f, 0, sizeof(*f));
	f->verdict = verdict;
	f->check = check;
	snprintf(f->subject, sizeof(f->subject), "%s", subject);
	va_start(ap, fmt);
	vsnprintf(f->what, sizeof(f->what), fmt, ap);
	va_end(ap);
	return f;
}

static void fix(struct finding *f, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(f->fix, sizeof(f->fix), fmt, ap);
	va_end(ap);
}

/* ---- reading files ---------------------------------------------------- */

/* "<v->root>/<rel>": files of the host's / (rel starts with a slash). */
static bool root_path(const struct vfioctl *v, char *buf, size_t size,
		      const char *rel)
{
	int n = snprintf(buf, size, "%s%s", v->root, rel);

	return n > 0 && (size_t)n < size;
}

static int proc_read(const struct vfioctl *v, const char *rel, char *buf,
		     size_t size)
{
	char path[4096];

	snprintf(path, sizeof(path), "%s/%s", v->proc, rel);
	return read_attr(path, buf, size);
}

static int sys_read(const struct vfioctl *v, char *buf, size_t size,
		    const char *rel)
{
	char path[4096];

	if (!sysfs_path(v, path, sizeof(path), "%s", rel))
		return -ENAMETOOLONG;
	return read_attr(path, buf, size);
}

static bool sys_exists(const struct vfioctl *v, const char *rel)
{
	char path[4096];
	struct stat st;

	return sysfs_path(v, path, sizeof(path), "%s", rel) && !stat(path, &st);
}

/* @word is one of the space-separated words of @line. */
static bool has_word(const char *line, const char *word)
{
	size_t len = strlen(word);
	const char *p;

	for (p = strstr(line, word); p; p = strstr(p + 1, word))
		if ((p == line || p[-1] == ' ') &&
		    (p[len] == ' ' || p[len] == '\0' || p[len] == '\n'))
			return true;
	return false;
}

/*
 * run_cmd() - run @argv (looked up in $PATH) with stdout and stderr into
 * @out.  Returns its exit status, or -errno when it could not be started
 * (-ENOENT: not installed).
 */
static int run_cmd(char *out, size_t size, char *const argv[])
{
	posix_spawn_file_actions_t fa;
	size_t len = 0;
	int pfd[2], err, status;
	ssize_t n;
	pid_t pid;
	char junk[256];

	out[0] = '\0';
	if (pipe(pfd))
		return -errno;
	fcntl(pfd[0], F_SETFD, FD_CLOEXEC);
	fcntl(pfd[1], F_SETFD, FD_CLOEXEC);
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
	posix_spawn_file_actions_adddup2(&fa, pfd[1], 1);
	posix_spawn_file_actions_adddup2(&fa, pfd[1], 2);
	err = posix_spawnp(&pid, argv[0], &fa, NULL, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	close(pfd[1]);
	if (err) {
		close(pfd[0]);
		return -err;
	}
	for (;;) {
		if (len + 1 < size)
			n = read(pfd[0], out + len, size - 1 - len);
		else
			n = read(pfd[0], junk, sizeof(junk));
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		if (len + 1 < size)
			len += n;
	}
	out[len] = '\0';
	close(pfd[0]);
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return -errno;
	return WIFEXITED(status) ? WEXITSTATUS(status) :
	       128 + WTERMSIG(status);
}

/* The first line of @s, in place. */
static char *first_line(char *s)
{
	s[strcspn(s, "\n")] = '\0';
	return s;
}

/* Directory entries not starting with a dot, sorted; -errno on error. */
static int list_dir(const char *dir, struct dirent ***names)
{
	struct dirent **all;
	int i, n, k = 0;

	n = scandir(dir, &all, NULL, alphasort);
	if (n < 0)
		return -errno;
	for (i = 0; i < n; i++) {
		if (all[i]->d_name[0] == '.')
			free(all[i]);
		else
			all[k++] = all[i];
	}
	*names = all;
	return k;
}

static void free_names(struct dirent **names, int n)
{
	while (n > 0)
		free(names[--n]);
	free(names);
}

static void fmt_size(unsigned long long b, char *buf, size_t size)
{
	static const char *const units[] = { "bytes", "KiB", "MiB", "GiB",
					     "TiB" };
	size_t u = 0;

	if (b == MEMLOCK_UNLIMITED) {
		snprintf(buf, size, "unlimited");
		return;
	}
	while (u + 1 < sizeof(units) / sizeof(units[0]) && b >= 1024 &&
	       !(b % 1024)) {
		b /= 1024;
		u++;
	}
	snprintf(buf, size, "%llu %s", b, units[u]);
}

bool parse_size(const char *s, unsigned long long *bytes)
{
	unsigned long long n;
	int shift = 0;
	char *end;

	if (!*s || *s == '-')
		return false;
	errno = 0;
	n = strtoull(s, &end, 10);
	if (errno || end == s)
		return false;
	switch (*end) {
	case 'k': case 'K': shift = 10; break;
	case 'm': case 'M': shift = 20; break;
	case 'g': case 'G': shift = 30; break;
	case 't': case 'T': shift = 40; break;
	case '\0': break;
	default: return false;
	}
	if (*end) {
		end++;
		if (*end == 'i' && end[1] == 'B')
			end += 2;
		else if (*end == 'B')
			end++;
	}
	if (*end || (shift && n > (~0ULL >> shift)))
		return false;
	*bytes = n << shift;
	return true;
}

/* ---- the host ------------------------------------------------------------ */

static void check_iommu(struct doctor *d)
{
	const struct vfioctl *v = d->v;
	char dir[4096], names[512] = "", cmdline[4096] = "", cpu[4096];
	const char *off = NULL, *kind = "";
	struct dirent **ents;
	struct finding *f;
	bool intel = false;
	size_t len = 0;
	FILE *in;
	int i, n;

	proc_read(v, "cmdline", cmdline, sizeof(cmdline));
	sysfs_path(v, dir, sizeof(dir), "class/iommu");
	n = list_dir(dir, &ents);
	for (i = 0; i < n; i++) {
		const char *e = ents[i]->d_name;

		if (!strncmp(e, "dmar", 4))
			kind = "Intel VT-d";
		else if (!strncmp(e, "ivhd", 4))
			kind = "AMD-Vi";
		if (len + strlen(e) + 2 < sizeof(names))
			len += snprintf(names + len, sizeof(names) - len,
					"%s%s", len ? " " : "", e);
	}
	if (n > 0) {
		free_names(ents, n);
		d->iommu = true;
		add(d, V_OK, "iommu", "host", "IOMMU present%s%s: %s%s",
		    *kind ? ", " : "", kind, names,
		    has_word(cmdline, "iommu=pt") ?
		    " (iommu=pt: only the host's own DMA bypasses it)" : "");
		return;
	}
	if (n == 0)
		free_names(ents, 0);
	if (has_word(cmdline, "intel_iommu=off"))
		off = "intel_iommu=off";
	else if (has_word(cmdline, "amd_iommu=off"))
		off = "amd_iommu=off";
	else if (has_word(cmdline, "iommu=off"))
		off = "iommu=off";
	if (off) {
		f = add(d, V_FAIL, "iommu", "host",
			"no IOMMU in %s: the kernel command line turns it off (%s)",
			dir, off);
		fix(f, "remove %s from GRUB_CMDLINE_LINUX in /etc/default/grub, run update-grub and reboot",
		    off);
		return;
	}
	snprintf(cpu, sizeof(cpu), "%s/cpuinfo", v->proc);
	in = fopen(cpu, "re");
	while (in && !intel && fgets(cpu, sizeof(cpu), in))
		intel = !strncmp(cpu, "vendor_id", 9) &&
			strstr(cpu, "GenuineIntel");
	if (in)
		fclose(in);
	if (intel && !has_word(cmdline, "intel_iommu=on")) {
		f = add(d, V_FAIL, "iommu", "host",
			"no IOMMU in %s, and the kernel command line has no intel_iommu=on (or VT-d is off in the firmware)",
			dir);
		fix(f, "add intel_iommu=on to GRUB_CMDLINE_LINUX in /etc/default/grub, run update-grub and reboot; if it is still absent, enable VT-d in the firmware setup");
		return;
	}
	f = add(d, V_FAIL, "iommu", "host",
		"no IOMMU in %s although the kernel command line allows it: the firmware has it off (or the machine has none)",
		dir);
	fix(f, "enable VT-d (Intel) or AMD-Vi/IOMMU (AMD) in the firmware setup and reboot");
}

/* The allow_unsafe_interrupts parameter that is set, or NULL. */
static const char *unsafe_param(const struct vfioctl *v)
{
	static const char *const params[] = {
		"module/vfio_pci/parameters/allow_unsafe_interrupts",
		"module/vfio_iommu_type1/parameters/allow_unsafe_interrupts",
	};
	char buf[16];
	size_t i;

	for (i = 0; i < sizeof(params) / sizeof(params[0]); i++)
		if (!sys_read(v, buf, sizeof(buf), params[i]) &&
		    (buf[0] == 'Y' || buf[0] == '1'))
			return params[i];
	return NULL;
}

/*
 * Neither our modules nor upstream's show whether a group's MSIs are
 * isolated.  What the kernel does show: the interrupt chips of
 * /proc/interrupts are named IR-PCI-MSI, IR-IO-APIC, ... when their
 * interrupts go through the remapping table (ITS-... on arm64).
 */
static void check_intremap(struct doctor *d)
{
	const struct vfioctl *v = d->v;
	const char *unsafe = unsafe_param(v);
	char path[4096], line[1024], cmdline[4096] = "";
	bool ir = false, plain = false;
	struct finding *f;
	FILE *in;

	if (!d->iommu) {
		f = add(d, V_FAIL, "intremap", "host",
			"no IOMMU, so no interrupt remapping");
		fix(f, "see the iommu finding");
		return;
	}
	snprintf(path, sizeof(path), "%s/interrupts", v->proc);
	in = fopen(path, "re");
	while (in && fgets(line, sizeof(line), in)) {
		/* arm64's GIC ITS isolates MSIs as remapping does. */
		if (strstr(line, " IR-") || strstr(line, " ITS-"))
			ir = true;
		else if (strstr(line, "PCI-MSI") || strstr(line, "IO-APIC"))
			plain = true;
	}
	if (in)
		fclose(in);
	if (ir) {
		add(d, V_OK, "intremap", "host",
		    "interrupt remapping is on (IR- interrupt chips in %s)%s",
		    path, unsafe ? "; allow_unsafe_interrupts is set but not needed" : "");
		return;
	}
	if (!plain) {
		f = add(d, V_WARN, "intremap", "host",
			"cannot tell whether interrupt remapping is on: %s shows no MSI or IO-APIC interrupts%s",
			path, in ? "" : " (cannot read it)");
		fix(f, "bind a device: vfio_pci refuses it without remapping, and says so in the kernel log (dmesg)");
		return;
	}
	if (unsafe) {
		f = add(d, V_WARN, "intremap", "host",
			"interrupt remapping is off, and %s is set: vfio takes devices anyway, and their user can make them send MSIs that raise any interrupt on the host",
			unsafe);
		fix(f, "turn remapping on (firmware, no intremap=off) and remove allow_unsafe_interrupts from /etc/modprobe.d");
		return;
	}
	proc_read(v, "cmdline", cmdline, sizeof(cmdline));
	f = add(d, V_FAIL, "intremap", "host",
		"interrupt remapping is off (no IR- interrupt chips in %s)%s: vfio_pci refuses every device",
		path, has_word(cmdline, "intremap=off") ?
		", the kernel command line says intremap=off" : "");
	if (has_word(cmdline, "intremap=off"))
		fix(f, "remove intremap=off from GRUB_CMDLINE_LINUX in /etc/default/grub, run update-grub and reboot");
	else
		fix(f, "enable interrupt remapping in the firmware (VT-d with x2APIC, or AMD-Vi); unsafe last resort: \"options vfio_pci allow_unsafe_interrupts=1\" in /etc/modprobe.d/vfio-unsafe.conf");
}

/* Our @name.ko for d->kver, as a path below v->root, into @out. */
static bool find_module(const struct doctor *d, const char *name,
			char *out, size_t size)
{
	static const char *const dirs[] = { "updates/dkms", "updates" };
	static const char *const exts[] = { "", ".xz", ".zst", ".gz" };
	char rel[512], path[4096];
	struct stat st;
	size_t i, j;

	for (i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++) {
		for (j = 0; j < sizeof(exts) / sizeof(exts[0]); j++) {
			snprintf(rel, sizeof(rel), "/lib/modules/%s/%s/%s.ko%s",
				 d->kver, dirs[i], name, exts[j]);
			if (root_path(d->v, path, sizeof(path), rel) &&
			    !stat(path, &st) && S_ISREG(st.st_mode)) {
				snprintf(out, size, "%s", path);
				return true;
			}
		}
	}
	return false;
}

static void check_modules(struct doctor *d)
{
	char pci[4096], out[512], *argv[] = { "dkms", "status", "-m",
		"vfio-dkms", "-k", d->kver, NULL };
	struct finding *f;
	int ret;

	if (proc_read(d->v, "sys/kernel/osrelease", d->kver,
		      sizeof(d->kver)) || !d->kver[0]) {
		add(d, V_WARN, "modules", "host",
		    "cannot tell the running kernel: %s/sys/kernel/osrelease unreadable",
		    d->v->proc);
		return;
	}
	if (find_module(d, "vfio", d->vfio_ko, sizeof(d->vfio_ko)) &&
	    find_module(d, "vfio_pci", pci, sizeof(pci))) {
		add(d, V_OK, "modules", "host",
		    "vfio.ko and vfio_pci.ko are installed for %s: %s",
		    d->kver, d->vfio_ko + strlen(d->v->root));
		return;
	}
	d->vfio_ko[0] = '\0';
	ret = run_cmd(out, sizeof(out), argv);
	f = add(d, V_FAIL, "modules", "host",
		"vfio.ko and vfio_pci.ko of vfio-dkms are not installed for the running kernel %s (dkms status: %s)",
		d->kver, ret == -ENOENT ? "dkms not installed" :
		out[0] ? first_line(out) : "nothing for this kernel");
	fix(f, "apt install linux-headers-%s, then dkms autoinstall -k %s",
	    d->kver, d->kver);
}

static void check_loaded(struct doctor *d)
{
	const struct vfioctl *v = d->v;
	char ver[64] = "";
	struct finding *f;

	if (!sys_exists(v, "module/vfio")) {
		f = add(d, V_WARN, "loaded", "host",
			"vfio and vfio_pci are not loaded");
		fix(f, "modprobe vfio_pci (vfio-bind.service does it at boot when devices.conf names a device)");
		return;
	}
	sys_read(v, ver, sizeof(ver), "module/vfio/version");
	if (!strcmp(ver, KERNEL_VFIO_VERSION)) {
		f = add(d, V_FAIL, "loaded", "host",
			"the kernel's own vfio (version %s) is loaded, not vfio-dkms's",
			ver);
		fix(f, "stop its users, then modprobe -r vfio_pci vfio_iommu_type1 vfio && modprobe vfio_pci; or reboot");
		return;
	}
	if (!sys_exists(v, "module/vfio_pci") || !vfio_driver_loaded(v)) {
		f = add(d, V_WARN, "loaded", "host",
			"vfio %s is loaded but not vfio_pci (no PCI driver \"%s\")",
			ver[0] ? ver : "(no version)", VFIO_DRIVER);
		fix(f, "modprobe vfio_pci");
		return;
	}
	add(d, V_OK, "loaded", "host", "vfio %s and vfio_pci are loaded",
	    ver[0] ? ver : "(no version)");
}

/*
 * The rule of etc/modprobe.d/vfio-dkms.conf and lib/intree-guard: the
 * in-tree modules that need the kernel's VFIO core are refused exactly
 * on kernels where updates/dkms/vfio.ko exists.
 */
static void check_intree(struct doctor *d)
{
	static const char *const confs[] = {
		"/lib/modprobe.d/vfio-dkms.conf",
		"/usr/lib/modprobe.d/vfio-dkms.conf",
		"/etc/modprobe.d/vfio-dkms.conf",
	};
	static const char *const intree[] = {
		"vfio_iommu_type1", "vfio_pci_core", "vfio_virqfd", "mdev",
	};
	const char *guard = "/usr/lib/vfio-dkms/intree-guard";
	char path[4096], line[512], loaded[256] = "", rel[128];
	const char *conf = NULL;
	bool ours = strstr(d->vfio_ko, "/updates/dkms/") != NULL;
	struct finding *f;
	size_t i, len = 0;
	FILE *in;

	for (i = 0; i < sizeof(intree) / sizeof(intree[0]); i++) {
		snprintf(rel, sizeof(rel), "module/%s", intree[i]);
		if (sys_exists(d->v, rel))
			len += snprintf(loaded + len, sizeof(loaded) - len,
					"%s%s", len ? " " : "", intree[i]);
	}
	if (d->vfio_ko[0] && loaded[0]) {
		f = add(d, V_FAIL, "intree", "host",
			"in-tree VFIO modules are loaded beside vfio-dkms's: %s",
			loaded);
		fix(f, "modprobe -r %s; and see that /usr/lib/modprobe.d/vfio-dkms.conf is in place (apt install --reinstall vfio-dkms)",
		    loaded);
		return;
	}
	for (i = 0; !conf && i < sizeof(confs) / sizeof(confs[0]); i++) {
		root_path(d->v, path, sizeof(path), confs[i]);
		in = fopen(path, "re");
		while (in && fgets(line, sizeof(line), in))
			if (!strncmp(line, "install vfio_iommu_type1 ", 25) &&
			    strstr(line, guard))
				conf = confs[i];
		if (in)
			fclose(in);
	}
	root_path(d->v, path, sizeof(path), guard);
	if (!conf || access(path, X_OK)) {
		f = add(d, ours ? V_FAIL : V_WARN, "intree", "host",
			"the in-tree block is not in force: %s",
			!conf ? "no vfio-dkms.conf in /lib/modprobe.d, /usr/lib/modprobe.d or /etc/modprobe.d sends vfio_iommu_type1 to intree-guard" :
			"/usr/lib/vfio-dkms/intree-guard is missing or not executable");
		fix(f, "apt install --reinstall vfio-dkms");
		return;
	}
	add(d, V_OK, "intree", "host",
	    "%s refuses the in-tree VFIO modules on kernels with updates/dkms/vfio.ko: %s, so on %s they are %s",
	    conf, ours ? "present" : "absent", d->kver,
	    ours ? "refused" : "loaded as usual");
}

/* 1 signed, 0 not, -1 cannot tell; the signer (if known) into @who. */
static int module_signed(const char *path, char *who, size_t size)
{
	char tail[sizeof(MODSIG_MAGIC) - 1], out[256];
	char *argv[] = { "modinfo", "-F", "signer", (char *)path, NULL };
	size_t len = strlen(path);
	int fd, ret = -1;
	off_t end;

	who[0] = '\0';
	if (len > 3 && !strcmp(path + len - 3, ".ko")) {
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			return -1;
		end = lseek(fd, 0, SEEK_END);
		if (end >= 0 && end < (off_t)sizeof(tail))
			ret = 0;
		else if (end > 0 &&
			 pread(fd, tail, sizeof(tail), end - sizeof(tail)) ==
			 (ssize_t)sizeof(tail))
			ret = !memcmp(tail, MODSIG_MAGIC, sizeof(tail));
		close(fd);
		return ret;
	}
	/* Compressed: the signature is inside; modinfo reads through. */
	if (run_cmd(out, sizeof(out), argv) != 0)
		return -1;
	snprintf(who, size, "%s", first_line(out));
	return who[0] != '\0';
}

/* The certificate DKMS signs with: framework.conf's, or its default. */
static void dkms_cert(const struct vfioctl *v, char *cert, size_t size)
{
	char path[4096], line[512];
	FILE *in;

	snprintf(cert, size, "%s", DKMS_MOK_CERT);
	root_path(v, path, sizeof(path), "/etc/dkms/framework.conf");
	in = fopen(path, "re");
	while (in && fgets(line, sizeof(line), in)) {
		char *p = line + strspn(line, " \t");

		if (!strncmp(p, "mok_certificate=", 16)) {
			p += 16;
			p[strcspn(p, "\n")] = '\0';
			if (*p == '"' && p[1] && p[strlen(p) - 1] == '"') {
				p[strlen(p) - 1] = '\0';
				p++;
			}
			snprintf(cert, size, "%s", p);
		}
	}
	if (in)
		fclose(in);
}

static void check_mok(struct doctor *d)
{
	char cert[1024], out[1024];
	char *argv[] = { "mokutil", "--test-key", cert, NULL };
	struct finding *f;
	int ret;

	dkms_cert(d->v, cert, sizeof(cert));
	ret = run_cmd(out, sizeof(out), argv);
	if (ret == -ENOENT) {
		f = add(d, V_WARN, "mok", "host",
			"cannot tell whether the DKMS key %s is enrolled: no mokutil",
			cert);
		fix(f, "apt install mokutil; mokutil --test-key %s", cert);
	} else if (strstr(out, "already enrolled")) {
		add(d, V_OK, "mok", "host", "the DKMS key %s is enrolled",
		    cert);
	} else if (strstr(out, "not enrolled")) {
		f = add(d, V_FAIL, "mok", "host",
			"the DKMS key %s is not enrolled: the kernel refuses modules signed with it",
			cert);
		fix(f, "mokutil --import %s, reboot and confirm the enrollment in MokManager",
		    cert);
	} else {
		f = add(d, V_WARN, "mok", "host",
			"cannot tell whether the DKMS key %s is enrolled: mokutil --test-key said: %s",
			cert, out[0] ? first_line(out) : "nothing");
		fix(f, "mokutil --test-key %s", cert);
	}
}

static void check_secureboot(struct doctor *d)
{
	const struct vfioctl *v = d->v;
	char path[4096], taint[32] = "", who[512];
	unsigned char var[5];
	struct finding *f;
	ssize_t n = -1;
	int fd, sig;

	if (!sys_exists(v, "firmware/efi")) {
		add(d, V_OK, "secureboot", "host",
		    "not booted through EFI: no Secure Boot");
		return;
	}
	/* efivarfs: 4 bytes of attributes, then the value. */
	sysfs_path(v, path, sizeof(path), "firmware/efi/efivars/%s",
		   SECUREBOOT_VAR);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		n = read(fd, var, sizeof(var));
		close(fd);
	}
	if (n != (ssize_t)sizeof(var) || var[4] != 1) {
		add(d, V_OK, "secureboot", "host", "Secure Boot is off%s",
		    fd < 0 ? " (no SecureBoot variable)" : "");
		return;
	}
	/* Loaded without the unsigned-module taint (E): its key is trusted. */
	if (sys_exists(v, "module/vfio") &&
	    !sys_read(v, taint, sizeof(taint), "module/vfio/taint") &&
	    !strchr(taint, 'E') && strcmp(taint, "")) {
		add(d, V_OK, "secureboot", "host",
		    "Secure Boot is on, and vfio is loaded with a verified signature (taint \"%s\")",
		    taint);
		return;
	}
	if (!d->vfio_ko[0]) {
		add(d, V_WARN, "secureboot", "host",
		    "Secure Boot is on; no module of ours to check (see modules)");
		return;
	}
	sig = module_signed(d->vfio_ko, who, sizeof(who));
	if (sig < 0) {
		f = add(d, V_WARN, "secureboot", "host",
			"Secure Boot is on; cannot tell whether %s is signed",
			d->vfio_ko + strlen(v->root));
		fix(f, "modinfo -F signer %s (apt install kmod)",
		    d->vfio_ko + strlen(v->root));
		return;
	}
	if (!sig) {
		f = add(d, V_FAIL, "secureboot", "host",
			"Secure Boot is on and %s is not signed: the kernel refuses to load it",
			d->vfio_ko + strlen(v->root));
		fix(f, "let DKMS sign it: dkms autoinstall -k %s --force (it makes /var/lib/dkms/mok.key on first use), then mokutil --import /var/lib/dkms/mok.pub and reboot",
		    d->kver);
		return;
	}
	add(d, V_OK, "secureboot", "host", "Secure Boot is on and %s is signed%s%s",
	    d->vfio_ko + strlen(v->root), who[0] ? " by " : "", who);
	check_mok(d);
}

/* The first kept problem of @c that is (not) a warning, as check says it. */
static void first_diag(struct conf *c, bool warning, char *buf, size_t size)
{
	size_t i;

	snprintf(buf, size, "?");
	for (i = 0; i < c->ndiag; i++) {
		const struct conf_diag *g = &c->diag[i];

		if (g->warning != warning)
			continue;
		snprintf(buf, size, "%s:%d: %s%s", c->path, g->line,
			 warning ? "warning: " : "", g->msg);
		return;
	}
}

/* devices.conf, with the checks of "vfioctl check", messages kept. */
static void check_config(struct doctor *d)
{
	const struct vfioctl *v = d->v;
	char first[CONF_MSG_MAX + 4200];
	struct finding *f;
	struct plan pl;
	int err;

	err = conf_load(&d->c, v->config, stderr);
	if (!err) {
		if (plan_build(&pl, &d->c, &d->l, true))
			conf_error(&d->c, 0, "out of memory");
		check_warnings(v, &d->c, &pl);
		plan_free(&pl);
	}
	/* Sorted by line: the first is where check would start. */
	conf_diag_sort(&d->c);
	if (err == -ENOENT) {
		add(d, V_OK, "config", "host",
		    "%s does not exist: no devices configured", v->config);
	} else if (err) {
		f = add(d, V_FAIL, "config", "host", "%s: %s", v->config,
			strerror(-err));
		fix(f, "make %s readable (it is root's, mode 0644)", v->config);
	} else if (d->c.errors) {
		first_diag(&d->c, false, first, sizeof(first));
		f = add(d, V_FAIL, "config", "host", "%d error%s, the first: %s",
			d->c.errors, d->c.errors == 1 ? "" : "s", first);
		fix(f, "vfioctl check lists them; edit %s at those lines",
		    v->config);
	} else if (d->c.warnings) {
		first_diag(&d->c, true, first, sizeof(first));
		f = add(d, V_WARN, "config", "host", "%d warning%s, the first: %s",
			d->c.warnings, d->c.warnings == 1 ? "" : "s", first);
		fix(f, "vfioctl check lists them; edit %s at those lines",
		    v->config);
	} else {
		add(d, V_OK, "config", "host", "%s is valid, %zu entr%s",
		    v->config, d->c.n, d->c.n == 1 ? "y" : "ies");
	}
	/* The finding says it; the lines are check's to print. */
	conf_diag_clear(&d->c);
}

/* ---- config space ----------------------------------------------------- */

struct cfg {
	unsigned char b[PCI_CFG_SPACE_EXP_SIZE];
	size_t size;		/* of the file: 256 conventional, 4096 PCIe */
	size_t len;		/* what could be read: 64 unless root */
};

static void cfg_load(const struct vfioctl *v, const char *addr,
		     struct cfg *c)
{
	char path[4096];
	struct stat st;
	ssize_t n;
	int fd;

	c->len = c->size = 0;
	if (!sysfs_path(v, path, sizeof(path), "bus/pci/devices/%s/config",
			addr))
		return;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	if (!fstat(fd, &st))
		c->size = st.st_size;
	while (c->len < sizeof(c->b)) {
		n = pread(fd, c->b + c->len, sizeof(c->b) - c->len, c->len);
		if (n <= 0)
			break;
		c->len += n;
	}
	close(fd);
}

static unsigned int cfg16(const struct cfg *c, size_t off)
{
	return off + 2 <= c->len ? c->b[off] | c->b[off + 1] << 8 : 0;
}

static unsigned int cfg32(const struct cfg *c, size_t off)
{
	return off + 4 <= c->len ? cfg16(c, off) | cfg16(c, off + 2) << 16 : 0;
}

/* Offset of capability @id in the standard list, 0 when absent. */
static size_t cfg_cap(const struct cfg *c, unsigned int id)
{
	size_t p;
	int ttl = PCI_FIND_CAP_TTL;

	if (!(cfg16(c, PCI_STATUS) & PCI_STATUS_CAP_LIST) ||
	    c->len <= PCI_CAPABILITY_LIST)
		return 0;
	/* The low two bits of a pointer are reserved: masked, as in Linux. */
	for (p = c->b[PCI_CAPABILITY_LIST] & ~3u;
	     p >= PCI_STD_HEADER_SIZEOF && p + 2 <= c->len && ttl--;
	     p = c->b[p + PCI_CAP_LIST_NEXT] & ~3u)
		if (c->b[p + PCI_CAP_LIST_ID] == id)
			return p;
	return 0;
}

/* Extended capability @id: 1 present, 0 absent, -1 cannot be read. */
static int cfg_ext_cap(const struct cfg *c, unsigned int id)
{
	size_t p = PCI_CFG_SPACE_SIZE;
	int ttl = (PCI_CFG_SPACE_EXP_SIZE - PCI_CFG_SPACE_SIZE) / 8;

	if (c->size && c->size <= PCI_CFG_SPACE_SIZE)
		return 0;	/* conventional PCI: no extended space */
	if (c->len <= PCI_CFG_SPACE_SIZE)
		return -1;
	while (ttl-- && p >= PCI_CFG_SPACE_SIZE && p + 4 <= c->len) {
		unsigned int h = cfg32(c, p);

		if (!h || h == 0xffffffff)
			return 0;
		if (PCI_EXT_CAP_ID(h) == id)
			return 1;
		/* Without the reserved low bits, as the kernel walks it. */
		p = PCI_EXT_CAP_NEXT(h);
	}
	return 0;
}

/* ---- each device ----------------------------------------------------- */

/* The PCI devices above @addr, nearest first, as addresses. */
static size_t upstream(const struct vfioctl *v, const char *addr,
		       char (*up)[PCI_ADDR_SIZE], size_t max)
{
	char path[4096], real[4096], *s, tmp[PCI_ADDR_SIZE];
	size_t n = 0;

	if (!sysfs_path(v, path, sizeof(path), "bus/pci/devices/%s", addr) ||
	    !realpath(path, real))
		return 0;
	while ((s = strrchr(real, '/'))) {
		*s = '\0';
		s = strrchr(real, '/');
		if (!s || !parse_pci_addr(s + 1, tmp) || strcmp(tmp, s + 1))
			break;
		if (n < max)
			memcpy(up[n++], tmp, sizeof(tmp));
	}
	return n;
}

/* "ADDR1 ADDR2 ..." of the group's members that are not bridges. */
static void group_list(const struct doctor *d, int group, char *buf,
		       size_t size)
{
	size_t i, len = 0;

	buf[0] = '\0';
	for (i = 0; i < d->l.n; i++) {
		const struct pci_dev *m = &d->l.devs[i];

		if (m->group == group && !pci_dev_is_bridge(m) &&
		    len + strlen(m->addr) + 2 < size)
			len += snprintf(buf + len, size - len, "%s%s",
					len ? " " : "", m->addr);
	}
}

static void check_group(struct doctor *d, const struct pci_dev *dev)
{
	char list[1024] = "", block[512] = "";
	size_t i, len = 0, blen = 0, members = 0, blockers = 0;
	struct finding *f;

	for (i = 0; i < d->l.n; i++) {
		const struct pci_dev *m = &d->l.devs[i];
		const char *drv = m->driver[0] ? m->driver : "no driver";

		if (m->group != dev->group)
			continue;
		members++;
		if (len + 64 < sizeof(list))
			len += snprintf(list + len, sizeof(list) - len,
					"%s%s (%s)", len ? ", " : "", m->addr,
					drv);
		if (m == dev)
			continue;
		if (pci_dev_is_bridge(m)) {
			add(d, V_OK, "member", dev->addr,
			    "%s (%04x:%04x, %s) of group %d is a bridge: does not block",
			    m->addr, m->vendor, m->device, drv, dev->group);
			continue;
		}
		if (!m->driver[0] || !strcmp(m->driver, VFIO_DRIVER)) {
			add(d, V_OK, "member", dev->addr,
			    "%s (%04x:%04x) of group %d is on %s: does not block",
			    m->addr, m->vendor, m->device, dev->group, drv);
			continue;
		}
		if (conf_match(&d->c, m)) {
			f = add(d, V_WARN, "member", dev->addr,
				"%s (%04x:%04x) of group %d is on %s; devices.conf names it, so apply moves it too",
				m->addr, m->vendor, m->device, dev->group, drv);
			fix(f, "vfioctl apply");
			continue;
		}
		blockers++;
		f = add(d, V_FAIL, "member", dev->addr,
			"%s (%04x:%04x) of group %d is on the host driver %s: it blocks the group",
			m->addr, m->vendor, m->device, dev->group, drv);
		fix(f, "vfioctl bind %s too (a group goes to one user as a whole), or leave %s to the host",
		    m->addr, dev->addr);
		if (blen + 20 < sizeof(block))
			blen += snprintf(block + blen, sizeof(block) - blen,
					 " %s", m->addr);
	}
	if (!blockers) {
		add(d, V_OK, "group", dev->addr,
		    "IOMMU group %d: %zu device%s: %s", dev->group, members,
		    members == 1 ? "" : "s", list);
		return;
	}
	f = add(d, V_FAIL, "group", dev->addr,
		"IOMMU group %d: %zu devices: %s; not viable while%s %s",
		dev->group, members, list, block, blockers > 1 ?
		"stay on host drivers" : "stays on a host driver");
	fix(f, "vfioctl bind%s", block);
}

/* Why the group holds more than the device, where sysfs shows it. */
static void check_shape(struct doctor *d, const struct pci_dev *dev)
{
	const struct vfioctl *v = d->v;
	char up[16][PCI_ADDR_SIZE], why[512] = "", all[1024];
	size_t i, n, others = 0;
	bool func = false;
	struct finding *f;
	struct cfg cfg;
	int acs;

	for (i = 0; i < d->l.n; i++) {
		const struct pci_dev *m = &d->l.devs[i];

		if (m->group != dev->group || m == dev ||
		    pci_dev_is_bridge(m))
			continue;
		others++;
		/* Same domain:bus:device, another function. */
		if (!strncmp(m->addr, dev->addr, 10))
			func = true;
	}
	if (!others) {
		add(d, V_OK, "shape", dev->addr,
		    "alone in IOMMU group %d (bridges aside)", dev->group);
		return;
	}
	cfg_load(v, dev->addr, &cfg);
	acs = cfg_ext_cap(&cfg, PCI_EXT_CAP_ID_ACS);
	if (func && acs != 1)
		snprintf(why, sizeof(why),
			 "it is a function of the multi-function device %.10s, %s: its functions may reach each other without the IOMMU",
			 dev->addr, acs < 0 ?
			 "whose ACS cannot be read (extended config space needs root)" :
			 "which has no ACS capability");
	n = upstream(v, dev->addr, up, 16);
	for (i = 0; !why[0] && i < n; i++) {
		cfg_load(v, up[i], &cfg);
		acs = cfg_ext_cap(&cfg, PCI_EXT_CAP_ID_ACS);
		if (acs == 1)
			continue;
		snprintf(why, sizeof(why),
			 "it sits behind the bridge %s, which %s: everything below it shares its group",
			 up[i], acs < 0 ?
			 "may lack ACS (its extended config space cannot be read; run as root)" :
			 "has no ACS capability");
	}
	if (!why[0])
		snprintf(why, sizeof(why),
			 "the kernel grouped them for a reason sysfs does not show (DMA aliases, a quirk, a PCIe-to-PCI bridge)");
	group_list(d, dev->group, all, sizeof(all));
	f = add(d, V_WARN, "shape", dev->addr,
		"IOMMU group %d holds %zu other device%s: %s",
		dev->group, others, others == 1 ? "" : "s", why);
	fix(f, "%sassign the whole group (vfioctl bind %s); the ACS override patch (pcie_acs_override) is not safe: it hides the sharing, the devices can still reach each other by DMA",
	    n ? "move the card to a slot on a port with ACS, or " :
	    "it is built into the chipset: ", all);
}

static void check_driver(struct doctor *d, const struct pci_dev *dev)
{
	struct finding *f;
	char why[512];

	if (!strcmp(dev->driver, VFIO_DRIVER)) {
		add(d, V_OK, "driver", dev->addr, "bound to %s", VFIO_DRIVER);
		return;
	}
	if (!dev->driver[0]) {
		add(d, V_OK, "driver", dev->addr,
		    "no driver: vfioctl bind takes it");
	} else {
		f = add(d, V_WARN, "driver", dev->addr,
			"bound to the host driver %s", dev->driver);
		fix(f, "vfioctl bind %s, or name it in %s and run vfioctl apply",
		    dev->addr, d->v->config);
	}
	if (!dev_in_use(d->v, dev, why, sizeof(why))) {
		add(d, V_OK, "inuse", dev->addr, "not in use by the host");
		return;
	}
	f = add(d, V_FAIL, "inuse", dev->addr,
		"in use by the host: %s; bind and apply refuse it", why);
	fix(f, "stop that use first (ip link set IF down, umount, swapoff); \"force\" on its devices.conf line takes it anyway and breaks that use");
}

static void check_reset_irq(struct doctor *d, const struct pci_dev *dev)
{
	char methods[128], rel[64], irqs[32] = "";
	struct finding *f;
	struct cfg cfg;
	size_t p;

	cfg_load(d->v, dev->addr, &cfg);
	snprintf(rel, sizeof(rel), "bus/pci/devices/%s/reset_method",
		 dev->addr);
	if (!sys_read(d->v, methods, sizeof(methods), rel) && methods[0]) {
		add(d, V_OK, "reset", dev->addr, "reset methods: %s", methods);
	} else if ((p = cfg_cap(&cfg, PCI_CAP_ID_EXP)) &&
		   (cfg32(&cfg, p + PCI_EXP_DEVCAP) & PCI_EXP_DEVCAP_FLR)) {
		add(d, V_OK, "reset", dev->addr,
		    "function level reset (FLR) in its PCIe capability");
	} else if ((p = cfg_cap(&cfg, PCI_CAP_ID_AF)) &&
		   (cfg.b[p + PCI_AF_CAP] & PCI_AF_CAP_FLR)) {
		add(d, V_OK, "reset", dev->addr,
		    "function level reset (FLR) in its AF capability");
	} else if ((p = cfg_cap(&cfg, PCI_CAP_ID_PM)) &&
		   !(cfg16(&cfg, p + PCI_PM_CTRL) &
		     PCI_PM_CTRL_NO_SOFT_RESET)) {
		add(d, V_OK, "reset", dev->addr,
		    "power-management reset (D3hot to D0)");
	} else {
		f = add(d, V_WARN, "reset", dev->addr,
			"no reset method%s: it keeps its state from one user to the next",
			cfg.len < PCI_CFG_SPACE_SIZE ?
			" (config space not fully readable: run as root)" : "");
		fix(f, "none in software; prefer a device with FLR, or give it to one user only");
	}
	if (cfg_cap(&cfg, PCI_CAP_ID_MSI))
		snprintf(irqs, sizeof(irqs), "MSI");
	if (cfg_cap(&cfg, PCI_CAP_ID_MSIX))
		snprintf(irqs + strlen(irqs), sizeof(irqs) - strlen(irqs),
			 "%sMSI-X", irqs[0] ? " and " : "");
	if (irqs[0]) {
		add(d, V_OK, "irq", dev->addr, "%s available", irqs);
		return;
	}
	f = add(d, V_WARN, "irq", dev->addr, "no MSI or MSI-X%s: INTx only",
		cfg.len < PCI_CFG_SPACE_SIZE ?
		" (config space not fully readable: run as root)" : "");
	fix(f, "none needed: INTx works, masked after each interrupt until the user unmasks it");
}

/* ---- the configured owner's RLIMIT_MEMLOCK ------------------------ */

struct limit {
	unsigned long long soft, hard;	/* bytes, MEMLOCK_UNLIMITED */
	int prio_soft, prio_hard;	/* pam_limits: user 3, @group 2, * 1 */
	char from[512];			/* where the soft limit comes from */
};

static bool parse_limit_value(const char *s, unsigned long long mult,
			      unsigned long long *val)
{
	unsigned long long n;
	char *end;

	if (!strcmp(s, "unlimited") || !strcmp(s, "infinity") ||
	    !strcmp(s, "-1")) {
		*val = MEMLOCK_UNLIMITED;
		return true;
	}
	if (mult == 1)
		return parse_size(s, val);
	errno = 0;
	n = strtoull(s, &end, 10);
	if (errno || *end || end == s)
		return false;
	*val = n * mult;
	return true;
}

/* systemd: DefaultLimitMEMLOCK=soft[:hard] in [Manager]. */
static void systemd_file(const char *path, const char *rel, struct limit *lim)
{
	char line[512], *p, *colon;
	unsigned long long s, h;
	int no = 0;
	FILE *in = fopen(path, "re");

	while (in && fgets(line, sizeof(line), in)) {
		no++;
		p = first_line(line);
		if (strncmp(p, "DefaultLimitMEMLOCK=", 20))
			continue;
		p += 20;
		colon = strchr(p, ':');
		if (colon)
			*colon = '\0';
		if (!parse_limit_value(p, 1, &s))
			continue;
		h = s;
		if (colon && !parse_limit_value(colon + 1, 1, &h))
			continue;
		lim->soft = s;
		lim->hard = h;
		snprintf(lim->from, sizeof(lim->from), "DefaultLimitMEMLOCK in %s:%d",
			 rel, no);
	}
	if (in)
		fclose(in);
}

/* pam_limits: "domain type item value", memlock in KiB. */
static void limits_file(const char *path, const char *rel,
			const struct passwd *pw, const gid_t *gids, int ngids,
			struct limit *lim)
{
	char line[512], dom[128], type[16], item[32], val[64];
	unsigned long long kib;
	int no = 0, prio, i;
	FILE *in = fopen(path, "re");

	while (in && fgets(line, sizeof(line), in)) {
		no++;
		if (sscanf(line, " %127s %15s %31s %63s", dom, type, item,
			   val) != 4 || dom[0] == '#' || strcmp(item, "memlock"))
			continue;
		prio = 0;
		if (!strcmp(dom, pw->pw_name)) {
			prio = 3;
		} else if (dom[0] == '@') {
			for (i = 0; i < ngids; i++) {
				struct group *g = getgrgid(gids[i]);

				if (g && !strcmp(g->gr_name, dom + 1))
					prio = 2;
			}
		} else if (!strcmp(dom, "*") && pw->pw_uid) {
			prio = 1;
		}
		if (!prio || !parse_limit_value(val, 1024, &kib))
			continue;
		if (strcmp(type, "hard") && prio >= lim->prio_soft) {
			lim->soft = kib;
			lim->prio_soft = prio;
			snprintf(lim->from, sizeof(lim->from), "%s:%d", rel, no);
		}
		if (strcmp(type, "soft") && prio >= lim->prio_hard) {
			lim->hard = kib;
			lim->prio_hard = prio;
		}
	}
	if (in)
		fclose(in);
}

/* @fn on /etc/X and then on each /etc/X.d/WHAT*.conf, in name order. */
static void each_conf(const struct vfioctl *v, const char *base,
		      const char *dir,
		      void (*fn)(const char *path, const char *rel, void *arg),
		      void *arg)
{
	char path[4096], rel[1024];
	struct dirent **ents;
	int i, n;

	root_path(v, path, sizeof(path), base);
	fn(path, base, arg);
	root_path(v, path, sizeof(path), dir);
	n = list_dir(path, &ents);
	for (i = 0; i < n; i++) {
		size_t len = strlen(ents[i]->d_name);

		if (len > 5 && !strcmp(ents[i]->d_name + len - 5, ".conf")) {
			snprintf(rel, sizeof(rel), "%s/%s", dir,
				 ents[i]->d_name);
			root_path(v, path, sizeof(path), rel);
			fn(path, rel, arg);
		}
	}
	if (n >= 0)
		free_names(ents, n);
}

struct limits_arg {
	const struct passwd *pw;
	gid_t gids[64];
	int ngids;
	struct limit *lim;
};

static void systemd_cb(const char *path, const char *rel, void *arg)
{
	systemd_file(path, rel, arg);
}

static void limits_cb(const char *path, const char *rel, void *arg)
{
	struct limits_arg *a = arg;

	limits_file(path, rel, a->pw, a->gids, a->ngids, a->lim);
}

static void check_memlock(struct doctor *d, const struct pci_dev *dev,
			  const struct conf_entry *e)
{
	unsigned long long need = d->v->memlock_for ? d->v->memlock_for :
				  TYPICAL_MEMLOCK;
	struct limit svc = { SYSTEMD_MEMLOCK, SYSTEMD_MEMLOCK, 0, 0,
			     "systemd's built-in DefaultLimitMEMLOCK" };
	char s[32], h[32], n[32], sv[32], kib[32];
	struct limits_arg a = { .ngids = 64 };
	struct passwd *pw;
	struct finding *f;
	struct limit lim;

	if (!e || !e->has_owner)
		return;
	if (!e->uid) {
		add(d, V_OK, "memlock", dev->addr,
		    "owner root: CAP_IPC_LOCK lifts RLIMIT_MEMLOCK");
		return;
	}
	pw = getpwuid(e->uid);
	if (!pw) {
		f = add(d, V_WARN, "memlock", dev->addr,
			"owner %s (uid %u) has no passwd entry: cannot read its limits",
			e->owner, (unsigned int)e->uid);
		fix(f, "vfioctl check");
		return;
	}
	each_conf(d->v, "/etc/systemd/system.conf", "/etc/systemd/system.conf.d",
		  systemd_cb, &svc);
	lim = svc;
	a.pw = pw;
	a.lim = &lim;
	if (getgrouplist(pw->pw_name, pw->pw_gid, a.gids, &a.ngids) < 0)
		a.ngids = 64;
	each_conf(d->v, "/etc/security/limits.conf", "/etc/security/limits.d",
		  limits_cb, &a);
	fmt_size(lim.soft, s, sizeof(s));
	fmt_size(lim.hard, h, sizeof(h));
	fmt_size(need, n, sizeof(n));
	fmt_size(svc.soft, sv, sizeof(sv));
	if (lim.soft != MEMLOCK_UNLIMITED && lim.soft < need) {
		f = add(d, d->v->memlock_for ? V_FAIL : V_WARN, "memlock",
			dev->addr,
			"owner %s: RLIMIT_MEMLOCK %s (hard %s) from %s, below the %s %s map; services get %s",
			pw->pw_name, s, h, lim.from, n,
			d->v->memlock_for ? "it will" : "a small VM would",
			sv);
		snprintf(kib, sizeof(kib), "%llu", (need + 1023) / 1024);
		fix(f, "add \"%s - memlock %s\" (KiB) to /etc/security/limits.d/vfio.conf and log in again; for a service, LimitMEMLOCK=%s in its unit (systemctl edit UNIT)",
		    pw->pw_name, kib, n);
		return;
	}
	add(d, V_OK, "memlock", dev->addr,
	    "owner %s: RLIMIT_MEMLOCK %s (hard %s) from %s, enough for %s; services get %s",
	    pw->pw_name, s, h, lim.from, n, sv);
}

/* The group's nodes against the ownership devices.conf gives them. */
static void check_nodes(struct doctor *d, const struct pci_dev *dev)
{
	static const char *const fmts[] = { "%s/pci:%d", "%s/%d" };
	const char *retrigger =
		"udevadm trigger --action=change --subsystem-match=vfio";
	bool bound = !strcmp(dev->driver, VFIO_DRIVER), configured;
	struct conf_entry own;
	char node[4200], want[2 * CONF_NAME_MAX + 16];
	struct finding *f;
	struct stat st;
	size_t i;

	if (!group_ownership(&d->c, &d->l, dev->group, &own))
		return;		/* the config finding says why */
	configured = own.has_owner || own.has_group || own.has_mode;
	ownership_fill_defaults(&own);
	snprintf(want, sizeof(want), "%s:%s %04o", own.owner, own.group,
		 own.mode);
	for (i = 0; i < sizeof(fmts) / sizeof(fmts[0]); i++) {
		snprintf(node, sizeof(node), fmts[i], d->v->dev_dir,
			 dev->group);
		if (stat(node, &st)) {
			if (!bound)
				continue;
			f = add(d, V_WARN, "node", dev->addr,
				"%s is missing although the device is on vfio",
				node);
			fix(f, "see that devtmpfs is on /dev; %s", retrigger);
			continue;
		}
		if (st.st_uid == own.uid && st.st_gid == own.gid &&
		    (st.st_mode & 07777) == own.mode) {
			add(d, V_OK, "node", dev->addr, "%s is %s, as configured",
			    node, want);
		} else if (configured && !st.st_uid && !st.st_gid &&
			   !(st.st_mode & 07777 & ~0600)) {
			f = add(d, V_WARN, "node", dev->addr,
				"%s is root:root %04o, devices.conf gives it %s: the udev rules have not been applied",
				node, st.st_mode & 07777, want);
			fix(f, "%s", retrigger);
		} else if (ownership_wider(&own, &st)) {
			f = add(d, V_FAIL, "node", dev->addr,
				"%s is %u:%u %04o, wider than the %s of devices.conf",
				node, (unsigned int)st.st_uid,
				(unsigned int)st.st_gid, st.st_mode & 07777,
				want);
			fix(f, "%s (the rule resets it to root:root 0600 first); then find what widened it",
			    retrigger);
		} else {
			f = add(d, V_WARN, "node", dev->addr,
				"%s is %u:%u %04o, narrower than the %s of devices.conf",
				node, (unsigned int)st.st_uid,
				(unsigned int)st.st_gid, st.st_mode & 07777,
				want);
			fix(f, "%s", retrigger);
		}
	}
}

static void check_device(struct doctor *d, const struct pci_dev *dev)
{
	struct finding *f;

	check_driver(d, dev);
	if (dev->group < 0) {
		f = add(d, V_FAIL, "group", dev->addr,
			"%04x:%04x has no IOMMU group", dev->vendor,
			dev->device);
		fix(f, "see the iommu finding of the host");
	} else {
		check_group(d, dev);
		check_shape(d, dev);
	}
	check_reset_irq(d, dev);
	check_memlock(d, dev, conf_match(&d->c, dev));
	if (dev->group >= 0)
		check_nodes(d, dev);
}

/* ---- output ------------------------------------------------------------ */

static void print_findings(const struct doctor *d, size_t count[3])
{
	struct json j;
	size_t i;

	if (d->v->json) {
		json_init(&j, stdout);
		json_begin_obj(&j, NULL);
		json_begin_arr(&j, "findings");
	}
	for (i = 0; i < d->t.n; i++) {
		const struct finding *f = &d->t.f[i];

		count[f->verdict]++;
		if (!d->v->json) {
			printf("%-4s  %-12s  %-10s  %s", verdict_names[f->verdict],
			       f->subject, f->check, f->what);
			printf(f->fix[0] ? "; fix: %s\n" : "%s\n", f->fix);
			continue;
		}
		json_begin_obj(&j, NULL);
		json_str(&j, "verdict", verdict_names[f->verdict]);
		json_str(&j, "subject", f->subject);
		json_str(&j, "check", f->check);
		json_str(&j, "what", f->what);
		json_str(&j, "fix", f->fix[0] ? f->fix : NULL);
		json_end_obj(&j);
	}
	if (d->v->json) {
		json_end_arr(&j);
		json_int(&j, "ok", count[V_OK]);
		json_int(&j, "warn", count[V_WARN]);
		json_int(&j, "fail", count[V_FAIL]);
		json_end_obj(&j);
		json_end(&j);
	} else {
		printf("doctor: %zu ok, %zu warn, %zu fail\n", count[V_OK],
		       count[V_WARN], count[V_FAIL]);
	}
}

int cmd_doctor(const struct vfioctl *v, int argc, char **argv)
{
	struct doctor d = { .v = v };
	size_t count[3] = { 0 }, i;
	char (*addrs)[PCI_ADDR_SIZE] = NULL;
	int k, err, ret = EXIT_OK;

	err = pci_list_load(v, &d.l);
	if (err) {
		msg_err("reading %s/bus/pci/devices: %s", v->sysfs,
			strerror(-err));
		return EXIT_FAILED;
	}
	if (argc > 0) {
		addrs = calloc(argc, sizeof(*addrs));
		if (!addrs) {
			msg_err("doctor: %s", strerror(ENOMEM));
			pci_list_free(&d.l);
			return EXIT_FAILED;
		}
	}
	for (k = 0; k < argc; k++) {
		if (!resolve_device(v, argv[k], addrs[k]))
			ret = EXIT_USAGE;
		else if (!pci_list_find(&d.l, addrs[k])) {
			msg_err("%s: no such PCI device", addrs[k]);
			ret = EXIT_USAGE;
		}
	}
	if (ret)
		goto out;

	check_iommu(&d);
	check_intremap(&d);
	check_modules(&d);
	check_loaded(&d);
	check_intree(&d);
	check_secureboot(&d);
	check_config(&d);

	/* Named devices; else the configured ones; else all but bridges. */
	for (k = 0; k < argc; k++)
		check_device(&d, pci_list_find(&d.l, addrs[k]));
	for (i = 0; !argc && i < d.l.n; i++) {
		const struct pci_dev *dev = &d.l.devs[i];

		if (d.c.n ? conf_match(&d.c, dev) != NULL :
		    (dev->class >> 16) != 0x06)
			check_device(&d, dev);
	}
	print_findings(&d, count);
	ret = count[V_FAIL] ? EXIT_DIFFERS : EXIT_OK;
out:
	free(addrs);
	free(d.t.f);
	conf_free(&d.c);
	pci_list_free(&d.l);
	return ret;
}
