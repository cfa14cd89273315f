// SPDX-License-Identifier: GPL-2.0-only
/*
 * vfio_test_devlock: a test-only module of the guest suite
 * (t-device-reset), never shipped.  It holds one PCI device's device lock
 * for a while, as any kernel path that works on the device may (a sysfs
 * read of its driver_override takes it for an instant), so that a test
 * can show what vfio_pci does when its reset finds the lock taken: under
 * TCG a reader spinning in user space holds it too rarely to show that.
 *
 * Parameter (/sys/module/vfio_test_devlock/parameters/):
 *   hold  write "DEV MS" to take DEV's device lock in a work item and
 *         keep it for MS milliseconds (at most 10000; -EBUSY while a
 *         hold is on); reads 1 while the lock is held, else 0
 */
#include <linux/delay.h>
#include <linux/device.h>
#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/pci.h>
#include <linux/workqueue.h>

#define DEVLOCK_MAX_MS	10000

static struct {
	struct work_struct	work;
	struct device		*dev;	/* referenced while a hold is on */
	unsigned int		ms;
	bool			busy;	/* hold_mutex: a hold is on */
	bool			held;	/* the lock is taken now */
} devlock;

static DEFINE_MUTEX(hold_mutex);

static void devlock_work(struct work_struct *work)
{
	struct device *dev = devlock.dev;

	device_lock(dev);
	WRITE_ONCE(devlock.held, true);
	msleep(devlock.ms);
	WRITE_ONCE(devlock.held, false);
	device_unlock(dev);

	mutex_lock(&hold_mutex);
	put_device(dev);
	devlock.dev = NULL;
	devlock.busy = false;
	mutex_unlock(&hold_mutex);
}

static int hold_set(const char *val, const struct kernel_param *kp)
{
	char name[32];
	struct device *dev;
	unsigned int ms;
	int ret = 0;

	if (sscanf(val, "%31s %u", name, &ms) != 2 || ms > DEVLOCK_MAX_MS)
		return -EINVAL;
	dev = bus_find_device_by_name(&pci_bus_type, NULL, name);
	if (!dev)
		return -ENODEV;
	mutex_lock(&hold_mutex);
	if (devlock.busy) {
		ret = -EBUSY;
		put_device(dev);
	} else {
		devlock.busy = true;
		devlock.dev = dev;
		devlock.ms = ms;
		schedule_work(&devlock.work);
	}
	mutex_unlock(&hold_mutex);
	return ret;
}

static int hold_get(char *buf, const struct kernel_param *kp)
{
	return sysfs_emit(buf, "%d\n", READ_ONCE(devlock.held));
}

static const struct kernel_param_ops hold_ops = {
	.set	= hold_set,
	.get	= hold_get,
};
module_param_cb(hold, &hold_ops, NULL, 0644);
MODULE_PARM_DESC(hold, "\"DEV MS\": hold DEV's device lock for MS ms");

static int __init devlock_init(void)
{
	INIT_WORK(&devlock.work, devlock_work);
	return 0;
}

static void __exit devlock_exit(void)
{
	flush_work(&devlock.work);
}

module_init(devlock_init);
module_exit(devlock_exit);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("vfio-dkms test: hold a PCI device's device lock");
