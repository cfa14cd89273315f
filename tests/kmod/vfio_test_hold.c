// SPDX-License-Identifier: GPL-2.0-only
/*
 * vfio_test_hold: a test-only module of the guest suite (t-module), never
 * shipped.  It holds the deletion of one PCI device between its
 * BUS_NOTIFY_DEL_DEVICE and BUS_NOTIFY_REMOVED_DEVICE, so that a test can
 * unload vfio_pci in between: nothing user space does can otherwise run
 * there.
 *
 * Parameters (/sys/module/vfio_test_hold/parameters/):
 *   dev       the device to hold, e.g. 0000:00:03.0 (at load time)
 *   hold_secs how long at most to hold it, so that a test gone wrong
 *             never wedges the guest
 *   state     0 idle, 1 held in DEL, 2 DEL over, 3 REMOVED came after
 *             vfio_pci was unloaded, 4 REMOVED came with vfio_pci still
 *             loaded (the case was not set up), 5 the hold timed out
 *   release   write anything to let the deletion go on
 */
#include <linux/completion.h>
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
	HOLD_REMOVED_UNLOADED,
	HOLD_REMOVED_LOADED,
	HOLD_TIMED_OUT,
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

/* How long REMOVED waits to learn that vfio_pci went; see below. */
#define HOLD_UNLOAD_WAIT	(2 * HZ)

static DECLARE_COMPLETION(hold_release);
static DECLARE_WAIT_QUEUE_HEAD(hold_wq);
static bool vfio_pci_gone;

static int hold_release_set(const char *val, const struct kernel_param *kp)
{
	complete_all(&hold_release);
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

static int hold_bus_notify(struct notifier_block *nb, unsigned long action,
			   void *data)
{
	struct device *d = data;

	if (!dev || strcmp(dev_name(d), dev))
		return NOTIFY_DONE;

	switch (action) {
	case BUS_NOTIFY_DEL_DEVICE:
		WRITE_ONCE(state, HOLD_HELD);
		dev_info(d, "vfio_test_hold: holding its deletion\n");
		if (!wait_for_completion_timeout(&hold_release,
						 hold_secs * HZ)) {
			dev_info(d, "vfio_test_hold: nobody released it\n");
			WRITE_ONCE(state, HOLD_TIMED_OUT);
			break;
		}
		WRITE_ONCE(state, HOLD_DELETED);
		break;
	case BUS_NOTIFY_REMOVED_DEVICE:
		if (READ_ONCE(state) != HOLD_DELETED)
			break;
		/*
		 * The bus notifier chain runs under a rwsem, so the rmmod
		 * of vfio_pci waited for our hold to end and then raced
		 * this REMOVED for it.  Had REMOVED won, vfio_pci's
		 * notifier (before ours) has seen it, and vfio_pci's exit
		 * waits for us: give up after a while and say so.  Had
		 * rmmod won, vfio_pci's GOING is due any moment.
		 */
		if (wait_event_timeout(hold_wq, READ_ONCE(vfio_pci_gone),
				       HOLD_UNLOAD_WAIT))
			WRITE_ONCE(state, HOLD_REMOVED_UNLOADED);
		else
			WRITE_ONCE(state, HOLD_REMOVED_LOADED);
		dev_info(d, "vfio_test_hold: removed, %s\n",
			 READ_ONCE(vfio_pci_gone) ? "after vfio_pci's unload" :
			 "before vfio_pci's unload");
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
	/* A hold still under way pins us: the notifier chain's rwsem. */
	complete_all(&hold_release);
	bus_unregister_notifier(&pci_bus_type, &hold_bus_nb);
	unregister_module_notifier(&hold_module_nb);
}

module_init(hold_init);
module_exit(hold_exit);

MODULE_DESCRIPTION("test only: hold a PCI device between DEL and REMOVED");
MODULE_LICENSE("GPL");
