// SPDX-License-Identifier: GPL-2.0-only
/*
 * vfio_test_hold: a test-only module of the guest suite (t-module), never
 * shipped.  It holds the deletion of one PCI device between its
 * BUS_NOTIFY_DEL_DEVICE and BUS_NOTIFY_REMOVED_DEVICE until vfio_pci is
 * unloaded, so that a test can unload vfio_pci in between: nothing user
 * space does can otherwise run there.
 *
 * The hold is a managed-resource action that our DEL notifier adds to the
 * device: device_del() releases the device's resources between the two
 * notifications, outside the bus notifier chain's rwsem, which rmmod
 * needs for writing.  (Holding inside the DEL notifier instead made rmmod
 * wait for that rwsem and then race REMOVED for it: a reader may take a
 * free rwsem ahead of a woken writer, and on one CPU REMOVED mostly won.)
 *
 * Parameters (/sys/module/vfio_test_hold/parameters/):
 *   dev       the device to hold, e.g. 0000:00:03.0 (at load time)
 *   hold_secs how long at most to hold it, so that a test gone wrong
 *             never wedges the guest
 *   state     0 idle, 1 held, 2 hold over once vfio_pci was unloaded,
 *             3 REMOVED came after that (the case is set up), 4 the hold
 *             ended with vfio_pci still loaded (hold_secs or release)
 *   release   write anything to end the hold
 */
#include <linux/device.h>
#include <linux/jiffies.h>
#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/notifier.h>
#include <linux/pci.h>
#include <linux/string.h>
#include <linux/wait.h>

enum {
	HOLD_IDLE,
	HOLD_HELD,
	HOLD_DELETED,
	HOLD_REMOVED,
	HOLD_ENDED_LOADED,
};

static char *dev;
module_param(dev, charp, 0444);
MODULE_PARM_DESC(dev, "PCI device whose deletion to hold");

static unsigned int hold_secs = 30;
module_param(hold_secs, uint, 0444);
MODULE_PARM_DESC(hold_secs, "longest hold in seconds");

static int state;
module_param(state, int, 0444);
MODULE_PARM_DESC(state, "where the held deletion is");

/* The hold waits here for either of the two flags. */
static DECLARE_WAIT_QUEUE_HEAD(hold_wq);
static bool vfio_pci_gone;
static bool hold_released;

static int hold_release_set(const char *val, const struct kernel_param *kp)
{
	WRITE_ONCE(hold_released, true);
	wake_up_all(&hold_wq);
	return 0;
}

static const struct kernel_param_ops hold_release_ops = {
	.set = hold_release_set,
};
module_param_cb(release, &hold_release_ops, NULL, 0200);
MODULE_PARM_DESC(release, "write to end the hold");

static int hold_module_notify(struct notifier_block *nb, unsigned long action,
			      void *data)
{
	struct module *mod = data;

	/* GOING comes after vfio_pci's exit unregistered its notifier. */
	if (action == MODULE_STATE_GOING && !strcmp(mod->name, "vfio_pci")) {
		WRITE_ONCE(vfio_pci_gone, true);
		wake_up_all(&hold_wq);
	}
	return NOTIFY_DONE;
}

static struct notifier_block hold_module_nb = {
	.notifier_call = hold_module_notify,
};

/*
 * Run by device_del() between DEL and REMOVED.  The reference taken in
 * DEL keeps us loaded until it is dropped as the last thing here.
 */
static void hold_until_unloaded(void *data)
{
	struct device *d = data;
	bool gone;

	WRITE_ONCE(state, HOLD_HELD);
	dev_info(d, "vfio_test_hold: holding its deletion until vfio_pci is unloaded\n");
	wait_event_timeout(hold_wq, READ_ONCE(vfio_pci_gone) ||
			   READ_ONCE(hold_released), hold_secs * HZ);
	gone = READ_ONCE(vfio_pci_gone);
	if (!gone)
		dev_info(d, "vfio_test_hold: hold ended with vfio_pci loaded\n");
	WRITE_ONCE(state, gone ? HOLD_DELETED : HOLD_ENDED_LOADED);
	module_put(THIS_MODULE);
}

static int hold_bus_notify(struct notifier_block *nb, unsigned long action,
			   void *data)
{
	struct device *d = data;

	if (!dev || strcmp(dev_name(d), dev))
		return NOTIFY_DONE;

	switch (action) {
	case BUS_NOTIFY_DEL_DEVICE:
		if (READ_ONCE(state) != HOLD_IDLE)
			break;
		__module_get(THIS_MODULE);
		if (devm_add_action(d, hold_until_unloaded, d)) {
			module_put(THIS_MODULE);
			dev_warn(d, "vfio_test_hold: cannot add the hold\n");
		}
		break;
	case BUS_NOTIFY_REMOVED_DEVICE:
		if (READ_ONCE(state) != HOLD_DELETED)
			break;
		WRITE_ONCE(state, HOLD_REMOVED);
		dev_info(d, "vfio_test_hold: removed after vfio_pci's unload\n");
		break;
	}
	return NOTIFY_DONE;
}

/* Below vfio_pci's 0: its DEL notifier counts the deletion before ours. */
static struct notifier_block hold_bus_nb = {
	.notifier_call = hold_bus_notify,
	.priority = -1,
};

static int __init hold_init(void)
{
	int ret;

	ret = register_module_notifier(&hold_module_nb);
	if (ret)
		return ret;
	ret = bus_register_notifier(&pci_bus_type, &hold_bus_nb);
	if (ret)
		unregister_module_notifier(&hold_module_nb);
	return ret;
}

static void __exit hold_exit(void)
{
	bus_unregister_notifier(&pci_bus_type, &hold_bus_nb);
	unregister_module_notifier(&hold_module_nb);
}

module_init(hold_init);
module_exit(hold_exit);

MODULE_DESCRIPTION("test only: hold a PCI device between DEL and REMOVED");
MODULE_LICENSE("GPL");
