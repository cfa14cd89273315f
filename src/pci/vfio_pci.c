// SPDX-License-Identifier: GPL-2.0-only
/*
 * vfio-dkms PCI bus driver (vfio_pci.ko): hands PCI devices bound to the
 * driver named "vfio" (or its alias "vfio-pci") to the VFIO core and
 * implements their device fds.  This file has the seed ABI's ioctls;
 * vfio_pci_container_ioctl.c has today's.
 *
 * Region N of a device fd starts at N << 40 (VFIO_PCI_OFFSET_SHIFT):
 * BAR0-5 are regions 0-5, the ROM 6, config space 7.  Seed IRQ indexes:
 * INTx 0, MSI 1, MSI-X 2, release request 3.
 */
#include <linux/delay.h>
#include <linux/iommu.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/notifier.h>
#include <linux/pci.h>
#include <linux/pm_runtime.h>
#include <linux/slab.h>

#include "../compat.h"
#include "../include/uapi/vfio.h"
#include "vfio_pci_private.h"

#define DRIVER_DESC	"VFIO PCI bus driver (vfio-dkms)"

static bool allow_unsafe_interrupts;
module_param(allow_unsafe_interrupts, bool, 0644);
MODULE_PARM_DESC(allow_unsafe_interrupts,
		 "Bind devices whose MSIs are not isolated by interrupt remapping (unsafe: the user can forge interrupts)");

static char ids[1024] __initdata;
module_param_string(ids, ids, sizeof(ids), 0);
MODULE_PARM_DESC(ids,
		 "Devices to bind to vfio-pci at load: vendor:device[:subvendor[:subdevice[:class[:class_mask]]]], hex, comma separated");

/*
 * Options of the kernel's vfio-pci that device assignment guides set.
 * nointxmask, disable_vga and disable_idle_d3 have the kernel's meaning.
 * So has enable_sriov: a PF bound here takes sriov_numvfs writes only
 * while it is set (it can change at run time), and its VFs are claimed
 * for vfio-pci (vfio_pci_sriov_configure()); the log says so.
 */
static bool nointxmask;
module_param(nointxmask, bool, 0444);
MODULE_PARM_DESC(nointxmask,
		 "Disable PCI 2.3 INTx masking: each device's INTx line must then be its own");

/* Read at probe, as disable_idle_d3. */
static bool disable_vga;
module_param(disable_vga, bool, 0644);
MODULE_PARM_DESC(disable_vga,
		 "Offer no legacy VGA region (region 8) of VGA devices (applies to devices bound afterwards)");

/* Read at probe: a device keeps the setting it was bound with. */
static bool disable_idle_d3;
module_param(disable_idle_d3, bool, 0644);
MODULE_PARM_DESC(disable_idle_d3,
		 "Leave devices that no user has open in D0 instead of D3hot (applies to devices bound afterwards)");

static bool enable_sriov;
module_param(enable_sriov, bool, 0644);
MODULE_PARM_DESC(enable_sriov,
		 "Let SR-IOV PFs bound here create VFs (sriov_numvfs); their VFs bind to vfio-pci");

static const struct {
	bool		*set;
	const char	*name;
	bool		refuse;
	const char	*what;
} vfio_pci_guide_opts[] = {
	{ &enable_sriov, "enable_sriov", false,
	  "PFs bound to vfio take sriov_numvfs writes; their VFs bind to vfio-pci" },
};

/*
 * Say what the guides' options mean here; take back any that this
 * driver cannot honour (none at the moment).
 */
static void __init vfio_pci_check_guide_opts(void)
{
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(vfio_pci_guide_opts); i++) {
		if (!*vfio_pci_guide_opts[i].set)
			continue;
		if (vfio_pci_guide_opts[i].refuse) {
			pr_warn("vfio_pci: %s=1 refused: %s\n",
				vfio_pci_guide_opts[i].name,
				vfio_pci_guide_opts[i].what);
			*vfio_pci_guide_opts[i].set = false;
			continue;
		}
		pr_info("vfio_pci: %s=1: %s\n", vfio_pci_guide_opts[i].name,
			vfio_pci_guide_opts[i].what);
	}
}

/* Any reset method at all, as probed when the device was added. */
static bool vfio_pci_has_reset(struct pci_dev *pdev)
{
	return pdev->reset_methods[0] != 0;
}

/*
 * pci_try_reset_function() without sleeping on any device lock (see
 * vfio.h).  A bus or slot reset goes through the upstream bridge, whose
 * config space must be blocked meanwhile (6.12 warns when it is not), so
 * take that too, or give up with -EAGAIN like the reset itself would.
 */
static int vfio_pci_try_reset_once(struct pci_dev *pdev)
{
	struct pci_dev *bridge = pci_upstream_bridge(pdev);
	int ret;

	if (bridge && !pci_cfg_access_trylock(bridge))
		return -EAGAIN;
	ret = pci_try_reset_function(pdev);
	if (bridge)
		pci_cfg_access_unlock(bridge);
	return ret;
}

/*
 * Any user may take the device lock for a moment: reading the device's
 * driver_override in sysfs does.  One trylock loses to a reader spinning
 * on it, so try for a bounded while (about 20 ms) before -EAGAIN.  A
 * remove() holds the lock for as long as it waits for the user: then
 * every try fails and the caller learns so within that bound.
 */
#define VFIO_PCI_RESET_TRIES	100

static int vfio_pci_try_reset(struct pci_dev *pdev)
{
	int ret, i;

	for (i = 0; i < VFIO_PCI_RESET_TRIES; i++) {
		ret = vfio_pci_try_reset_once(pdev);
		if (ret != -EAGAIN)
			break;
		usleep_range(100, 200);
	}
	return ret;
}

/*
 * Whether the device decodes I/O (@io) or memory now, from the driver's
 * copy of the decode bits (vdev->decode): a config space read per BAR
 * access cost a fifth of pread's speed.
 */
bool vfio_pci_decodes(struct vfio_pci_device *vdev, bool io)
{
	lockdep_assert_held(&vdev->memory_lock);
	return vdev->decode & (io ? PCI_COMMAND_IO : PCI_COMMAND_MEMORY);
}

bool vfio_pci_bar_decoded(struct vfio_pci_device *vdev, int bar)
{
	return vfio_pci_decodes(vdev, vfio_pci_bar_is_io(vdev->pdev, bar));
}

/*
 * Take vdev->decode from the device after open or a reset; a device
 * without a real memory enable (no_command_memory) keeps the user's bit.
 * Called with lock and memory_lock (write) held.
 */
void vfio_pci_decode_sync(struct vfio_pci_device *vdev)
{
	struct pci_dev *pdev = vdev->pdev;
	u16 cmd, keep = 0;

	lockdep_assert_held(&vdev->lock);
	lockdep_assert_held_write(&vdev->memory_lock);
	pci_read_config_word(pdev, PCI_COMMAND, &cmd);
	if (pdev->no_command_memory)
		keep = PCI_COMMAND_MEMORY;
	vdev->decode = (vdev->decode & keep) |
		       (cmd & ~keep & (PCI_COMMAND_IO | PCI_COMMAND_MEMORY));
}

/*
 * For the kernel's own accesses to device memory (ROM, MSI-X table):
 * take memory_lock for write, so that the user sees nothing of the
 * moment memory decode is on against their setting, and turn it on.
 * Returns the command register to give to ..._unlock_and_restore().
 */
u16 vfio_pci_memory_lock_and_enable(struct vfio_pci_device *vdev)
{
	struct pci_dev *pdev = vdev->pdev;
	u16 cmd;

	down_write(&vdev->memory_lock);
	spin_lock_irq(&vdev->irqlock);
	pci_read_config_word(pdev, PCI_COMMAND, &cmd);
	if (!(cmd & PCI_COMMAND_MEMORY))
		pci_write_config_word(pdev, PCI_COMMAND,
				      cmd | PCI_COMMAND_MEMORY);
	spin_unlock_irq(&vdev->irqlock);
	return cmd;
}

void vfio_pci_memory_unlock_and_restore(struct vfio_pci_device *vdev,
					u16 cmd)
{
	struct pci_dev *pdev = vdev->pdev;
	u16 cur;

	/* Only memory decode goes back: INTx disable may have moved. */
	if (!(cmd & PCI_COMMAND_MEMORY)) {
		spin_lock_irq(&vdev->irqlock);
		pci_read_config_word(pdev, PCI_COMMAND, &cur);
		pci_write_config_word(pdev, PCI_COMMAND,
				      cur & ~PCI_COMMAND_MEMORY);
		spin_unlock_irq(&vdev->irqlock);
	}
	up_write(&vdev->memory_lock);
}

/* Where the MSI-X table lives, if the device has one. */
static void vfio_pci_find_msix(struct vfio_pci_device *vdev)
{
	struct pci_dev *pdev = vdev->pdev;
	u32 table;

	vdev->msix_bar = -1;
	if (!pdev->msix_cap)
		return;
	pci_read_config_dword(pdev, pdev->msix_cap + PCI_MSIX_TABLE, &table);
	vdev->msix_bar = table & PCI_MSIX_TABLE_BIR;
	vdev->msix_offset = table & PCI_MSIX_TABLE_OFFSET;
	vdev->msix_size = pci_msix_vec_count(pdev) * PCI_MSIX_ENTRY_SIZE;
}

/*
 * SR-IOV VF tokens, the kernel's vfio-pci's rule: the user of a PF bound
 * here can disturb its VFs and see what passes through them, so a VF's
 * user must show that it trusts the PF's by naming the UUID the PF's user
 * set (VFIO_DEVICE_FEATURE_PCI_VF_TOKEN, or the token given when opening
 * the PF with none of its VFs open): "ADDR vf_token=UUID" in
 * GET_DEVICE_FD.  While VFs are open, the PF opens only with that token.
 * A PF's token starts as the null UUID, as upstream's.
 */
static DEFINE_MUTEX(vfio_pci_vf_token_lock);
static LIST_HEAD(vfio_pci_pfs);		/* vfio_pci_vf_token_lock */

/* @pdev's PF when @pdev is a VF and its PF is bound here, else NULL. */
static struct vfio_pci_device *vfio_pci_find_pf(struct pci_dev *pdev)
{
	struct pci_dev *physfn = pci_physfn(pdev);
	struct vfio_pci_device *pf;

	lockdep_assert_held(&vfio_pci_vf_token_lock);
	if (!pdev->is_virtfn)
		return NULL;
	list_for_each_entry(pf, &vfio_pci_pfs, pf_next)
		if (pf->pdev == physfn)
			return pf;
	return NULL;
}

/* VFIO_DEVICE_FEATURE_PCI_VF_TOKEN SET on the PF @vdev. */
void vfio_pci_set_vf_token(struct vfio_pci_device *vdev, const uuid_t *uuid)
{
	mutex_lock(&vfio_pci_vf_token_lock);
	uuid_copy(&vdev->vf_token, uuid);
	mutex_unlock(&vfio_pci_vf_token_lock);
}

/*
 * Whether the token the user named (@has_token: any; then @uuid) lets
 * @vdev be opened: 0, -EACCES when one is needed and missing or wrong,
 * -EINVAL when one is given for a device no token applies to.  A PF with
 * none of its VFs open takes a given token as its new one.
 */
static int vfio_pci_check_vf_token(struct vfio_pci_device *vdev,
				   bool has_token, const uuid_t *uuid)
{
	struct pci_dev *pdev = vdev->pdev;
	struct vfio_pci_device *pf;
	const char *why = NULL;
	int ret = 0;

	mutex_lock(&vfio_pci_vf_token_lock);
	pf = vfio_pci_find_pf(pdev);
	if (pf || (vdev->sriov_pf && vdev->vf_users)) {
		if (!pf)
			pf = vdev;
		if (!has_token)
			why = "a VF token is needed to open the device";
		else if (!uuid_equal(uuid, &pf->vf_token))
			why = "wrong VF token";
		ret = why ? -EACCES : 0;
	} else if (vdev->sriov_pf) {
		if (has_token)
			uuid_copy(&vdev->vf_token, uuid);
	} else if (has_token) {
		why = "VF token given, but the device is no PF here nor a VF of one";
		ret = -EINVAL;
	}
	mutex_unlock(&vfio_pci_vf_token_lock);
	if (why)
		pci_info_ratelimited(pdev, "GET_DEVICE_FD: %s\n", why);
	return ret;
}

/* A VF's open counts as a user of its PF's token, its release no more. */
static void vfio_pci_vf_token_user(struct vfio_pci_device *vdev, bool open)
{
	struct vfio_pci_device *pf;

	if (!vdev->pdev->is_virtfn)
		return;
	mutex_lock(&vfio_pci_vf_token_lock);
	pf = vfio_pci_find_pf(vdev->pdev);
	if (open && pf) {
		pf->vf_users++;
		vdev->vf_counted = true;
	} else if (!open && vdev->vf_counted) {
		/* The PF's remove takes its VFs away first: pf is still there. */
		if (!WARN_ON(!pf || !pf->vf_users))
			pf->vf_users--;
		vdev->vf_counted = false;
	}
	mutex_unlock(&vfio_pci_vf_token_lock);
}

#define VFIO_PCI_VF_TOKEN_ARG	"vf_token="

/*
 * GET_DEVICE_FD's name: the device's own, then optionally, after spaces,
 * one "vf_token=UUID".  0 when it names another device; -EINVAL for
 * anything else after the name, else what the token check says.
 */
static int vfio_pci_match(struct device *dev, const char *buf)
{
	struct vfio_pci_device *vdev = dev_get_drvdata(dev);
	const char *name = dev_name(dev);
	size_t len = strlen(name), arg = strlen(VFIO_PCI_VF_TOKEN_ARG);
	bool has_token = false;
	uuid_t uuid;
	int ret;

	if (strncmp(buf, name, len))
		return 0;
	buf += len;
	if (*buf && *buf != ' ')
		return 0;
	while (*buf) {
		if (*buf == ' ') {
			buf++;
			continue;
		}
		if (has_token || strncmp(buf, VFIO_PCI_VF_TOKEN_ARG, arg))
			return -EINVAL;
		buf += arg;
		if (strlen(buf) < UUID_STRING_LEN || uuid_parse(buf, &uuid))
			return -EINVAL;
		buf += UUID_STRING_LEN;
		has_token = true;
	}
	ret = vfio_pci_check_vf_token(vdev, has_token, &uuid);
	return ret ? ret : 1;
}

static void vfio_pci_unmap_bars(struct vfio_pci_device *vdev)
{
	struct pci_dev *pdev = vdev->pdev;
	int i;

	for (i = 0; i < VFIO_PCI_NUM_BARS; i++) {
		if (vdev->barmap[i])
			pci_iounmap(pdev, vdev->barmap[i]);
		vdev->barmap[i] = NULL;
		if (vdev->bar_requested[i])
			pci_release_selected_regions(pdev, 1 << i);
		vdev->bar_requested[i] = false;
	}
}

static int vfio_pci_map_bars(struct vfio_pci_device *vdev)
{
	struct pci_dev *pdev = vdev->pdev;
	int i, ret;

	for (i = 0; i < VFIO_PCI_NUM_BARS; i++) {
		if (!pci_resource_len(pdev, i))
			continue;
		ret = pci_request_selected_regions(pdev, 1 << i, "vfio");
		if (ret) {
			pci_warn(pdev, "BAR %d busy\n", i);
			goto err;
		}
		vdev->bar_requested[i] = true;
		vdev->barmap[i] = pci_iomap(pdev, i, 0);
		if (!vdev->barmap[i]) {
			ret = -ENOMEM;
			goto err;
		}
	}
	return 0;
err:
	vfio_pci_unmap_bars(vdev);
	return ret;
}

static int vfio_pci_open(void *device_data)
{
	struct vfio_pci_device *vdev = device_data;
	struct pci_dev *pdev = vdev->pdev;
	int ret;

	mutex_lock(&vdev->lock);
	if (WARN_ON(vdev->enabled)) {
		ret = -EBUSY;
		goto out;
	}
	/* Out of D3hot for as long as the user has it (vfio_pci_pm_ops). */
	if (vdev->idle_d3) {
		ret = pm_runtime_resume_and_get(&pdev->dev);
		if (ret < 0)
			goto out;
	}
	ret = pci_enable_device(pdev);
	if (ret)
		goto err_pm;
	/*
	 * Never hand a device over with what its last user, or the driver
	 * it had before, programmed into it: DMA rings aimed at IOVAs that
	 * now hold this user's memory.  The release resets it with no lock
	 * of the core held; only when that could not be done (or nothing
	 * reset it since the bind) does the open, as upstream's does at
	 * every first open.  The device lock held elsewhere fails the open
	 * with -EAGAIN, as upstream's.
	 */
	if (vdev->needs_reset && vdev->reset_works) {
		ret = vfio_pci_try_reset(pdev);
		if (ret == -EAGAIN)
			goto err_disable;
		if (ret)
			pci_warn(pdev, "reset before the open failed: %d\n", ret);
		vdev->needs_reset = false;
	}
	/*
	 * A device that firmware or a previous driver left mastering is
	 * live now; the user enables DMA when ready, and release must not
	 * put bus master back from the saved state either.
	 */
	pci_clear_master(pdev);

	/* What release puts back, whatever the user does meanwhile. */
	pci_save_state(pdev);
	vdev->saved_state = pci_store_saved_state(pdev);
	if (!vdev->saved_state) {
		ret = -ENOMEM;
		goto err_disable;
	}

	ret = vfio_pci_map_bars(vdev);
	if (ret)
		goto err_free_state;

	vdev->pci_2_3 = !nointxmask && pci_intx_mask_supported(pdev);
	vdev->irq_type = VFIO_PCI_IRQ_NONE;
	vdev->intx_masked = false;
	vfio_pci_find_msix(vdev);
	vfio_pci_config_init(vdev);
	vdev->enabled = true;
	vfio_pci_vf_token_user(vdev, true);
	mutex_unlock(&vdev->lock);
	return 0;

err_free_state:
	kfree(vdev->saved_state);
	vdev->saved_state = NULL;
err_disable:
	pci_disable_device(pdev);
err_pm:
	if (vdev->idle_d3)
		pm_runtime_put(&pdev->dev);
out:
	mutex_unlock(&vdev->lock);
	return ret;
}

static void vfio_pci_release(void *device_data)
{
	struct vfio_pci_device *vdev = device_data;
	struct pci_dev *pdev = vdev->pdev;

	mutex_lock(&vdev->lock);
	if (!vdev->enabled)
		goto out;

	/* Stop interrupts and DMA before anything else. */
	vfio_pci_irqs_disable_all(vdev);
	pci_clear_master(pdev);
	vfio_pci_unmap_bars(vdev);

	/*
	 * Reset what the user may have left running inside the device, but
	 * not while it is being removed: the device lock is held then, and
	 * for a hotplug slot the removing pciehp thread holds the slot's
	 * reset lock that a slot reset would wait for.  IRQs and bus master
	 * are off already, which is what matters for a departing device.
	 */
	down_write(&vdev->memory_lock);
	if (vdev->reset_works && !READ_ONCE(vdev->removing)) {
		int ret = vfio_pci_try_reset(pdev);

		if (ret)
			pci_warn(pdev, "reset at release failed (%d): the next open resets it\n",
				 ret);
		vdev->needs_reset = ret != 0;
	}

	if (vdev->saved_state) {
		pci_load_and_free_saved_state(pdev, &vdev->saved_state);
		pci_restore_state(pdev);
	}
	pci_disable_device(pdev);
	up_write(&vdev->memory_lock);
	vdev->enabled = false;
	if (vdev->idle_d3)
		pm_runtime_put(&pdev->dev);
out:
	vfio_pci_vf_token_user(vdev, false);
	mutex_unlock(&vdev->lock);
}

/* The seed ABI's regions end where the container ABI's VGA region starts. */
static_assert(VFIO_PCI_NUM_REGIONS == VFIO_PCI_VGA_INDEX);

static ssize_t vfio_pci_rw(struct vfio_pci_device *vdev, char *buf,
			   size_t count, loff_t *ppos, bool write)
{
	unsigned int index = VFIO_PCI_INDEX(*ppos);
	ssize_t ret;

	if (*ppos < 0 || index > VFIO_PCI_VGA_INDEX)
		return -EINVAL;
	if (!count)
		return 0;

	switch (index) {
	case VFIO_PCI_VGA_INDEX:
		ret = vfio_pci_vga_rw(vdev, buf, count, *ppos, write);
		break;
	case VFIO_PCI_CONFIG_REGION_INDEX:
		mutex_lock(&vdev->lock);
		ret = vfio_pci_config_rw(vdev, buf, count,
					 *ppos & VFIO_PCI_OFFSET_MASK, write);
		mutex_unlock(&vdev->lock);
		break;
	case VFIO_PCI_ROM_REGION_INDEX:
		if (write)
			return -EINVAL;
		mutex_lock(&vdev->lock);
		ret = vfio_pci_rom_read(vdev, buf, count, *ppos);
		mutex_unlock(&vdev->lock);
		break;
	default:
		ret = vfio_pci_bar_rw(vdev, buf, count, *ppos, write);
		break;
	}
	if (ret > 0)
		*ppos += ret;
	return ret;
}

static ssize_t vfio_pci_read(void *device_data, char *buf, size_t count,
			     loff_t *ppos)
{
	return vfio_pci_rw(device_data, buf, count, ppos, false);
}

static ssize_t vfio_pci_write(void *device_data, const char *buf,
			      size_t count, loff_t *ppos)
{
	/* The shared path only reads buf when writing. */
	return vfio_pci_rw(device_data, (char *)buf, count, ppos, true);
}

static int vfio_pci_mmap(void *device_data, struct vm_area_struct *vma,
			 unsigned long *pfn)
{
	struct vfio_pci_device *vdev = device_data;
	struct pci_dev *pdev = vdev->pdev;
	unsigned int shift = VFIO_PCI_OFFSET_SHIFT - PAGE_SHIFT;
	unsigned long index = vma->vm_pgoff >> shift;
	unsigned long pgoff = vma->vm_pgoff & ((1UL << shift) - 1);
	unsigned long len = vma->vm_end - vma->vm_start;
	u64 size;

	if (index >= VFIO_PCI_NUM_BARS)
		return -EINVAL;
	/* A private COW copy of device memory makes no sense. */
	if (!(vma->vm_flags & VM_SHARED))
		return -EINVAL;
	if (!vfio_pci_bar_is_mem(pdev, index) || !vdev->barmap[index])
		return -EINVAL;
	size = pci_resource_len(pdev, index);
	if (size < PAGE_SIZE)
		return -EINVAL;
	if (pgoff >= size >> PAGE_SHIFT ||
	    len > size - ((u64)pgoff << PAGE_SHIFT))
		return -EINVAL;

	vma->vm_page_prot = pgprot_noncached(vma->vm_page_prot);
	*pfn = (pci_resource_start(pdev, index) >> PAGE_SHIFT) + pgoff;
	return 0;
}

/*
 * A page of a BAR is mapped only while the device decodes the BAR; a
 * config write that turns decode off, and a reset, zap the mappings
 * under memory_lock first, so they fault in here again afterwards.
 */
static vm_fault_t vfio_pci_fault(void *device_data, struct vm_fault *vmf,
				 unsigned long pfn)
{
	struct vfio_pci_device *vdev = device_data;
	struct vm_area_struct *vma = vmf->vma;
	unsigned int shift = VFIO_PCI_OFFSET_SHIFT - PAGE_SHIFT;
	int bar = vma->vm_pgoff >> shift;
	vm_fault_t ret = VM_FAULT_SIGBUS;

	down_read(&vdev->memory_lock);
	if (vfio_pci_bar_decoded(vdev, bar))
		ret = vmf_insert_pfn(vma, vmf->address, pfn);
	up_read(&vdev->memory_lock);
	return ret;
}

/* ---------------- ioctls ---------------------------------------------- */

/*
 * The ioctls work on the core's kernel copy of their argument (struct
 * vfio_ioctl_desc): *len bytes in, *len bytes back out on success.
 */

static long vfio_pci_get_info(struct vfio_pci_device *vdev,
			      struct vfio_device_info *info, u32 *len)
{
	/* Every output field is written: nothing of the caller's stays. */
	info->flags = vdev->reset_works ? VFIO_DEVICE_FLAGS_RESET : 0;
	info->num_regions = VFIO_PCI_NUM_REGIONS;
	info->num_irqs = VFIO_PCI_NUM_IRQS;
	return 0;
}

static long vfio_pci_get_region_info(struct vfio_pci_device *vdev,
				     struct vfio_region_info *info, u32 *len)
{
	struct pci_dev *pdev = vdev->pdev;

	if (info->index >= VFIO_PCI_NUM_REGIONS)
		return -EINVAL;

	info->flags = 0;
	info->resv = 0;
	info->offset = VFIO_PCI_INDEX_TO_OFFSET(info->index);
	switch (info->index) {
	case VFIO_PCI_CONFIG_REGION_INDEX:
		info->size = pdev->cfg_size;
		break;
	case VFIO_PCI_ROM_REGION_INDEX:
		info->size = pci_resource_len(pdev, PCI_ROM_RESOURCE);
		if (info->size)
			info->flags = VFIO_REGION_INFO_FLAG_RO;
		break;
	default:
		info->size = pci_resource_len(pdev, info->index);
		if (vfio_pci_bar_is_mem(pdev, info->index) &&
		    info->size >= PAGE_SIZE)
			info->flags = VFIO_REGION_INFO_FLAG_MMAP;
		break;
	}
	return 0;
}

static long vfio_pci_get_irq_info(struct vfio_pci_device *vdev,
				  struct vfio_irq_info *info, u32 *len)
{
	if (info->index >= VFIO_PCI_NUM_IRQS)
		return -EINVAL;

	info->count = vfio_pci_irq_count(vdev, info->index);
	info->flags = 0;
	if (info->index == VFIO_PCI_INTX_IRQ_INDEX && info->count)
		info->flags = VFIO_IRQ_INFO_FLAG_LEVEL;
	return 0;
}

#define VFIO_PCI_EVENTFDS_MINSZ offsetofend(struct vfio_irq_eventfds, count)

/*
 * The eventfds to copy in after the header, judged from it alone: no
 * device has more vectors than MSI-X's 2048.  The ioctl checks again
 * against the device.
 */
static u32 vfio_pci_eventfds_datasz(const void *arg)
{
	const struct vfio_irq_eventfds *hdr = arg;
	const u32 minsz = VFIO_PCI_EVENTFDS_MINSZ;

	if (hdr->flags || hdr->index >= VFIO_PCI_NUM_IRQS ||
	    hdr->count > PCI_MSIX_FLAGS_QSIZE + 1 ||
	    hdr->argsz - minsz < hdr->count * sizeof(s32))
		return 0;
	return hdr->count * sizeof(s32);
}

/* SET_IRQ_EVENTFDS and SET_UNMASK_IRQ_EVENTFDS share their argument. */
static long vfio_pci_set_eventfds(struct vfio_pci_device *vdev,
				  struct vfio_irq_eventfds *hdr, u32 *len,
				  bool unmask)
{
	const u32 minsz = VFIO_PCI_EVENTFDS_MINSZ;
	long ret;

	if (hdr->flags || hdr->index >= VFIO_PCI_NUM_IRQS)
		return -EINVAL;
	if (hdr->count > vfio_pci_irq_count(vdev, hdr->index))
		return -EINVAL;
	if (hdr->argsz - minsz < (u64)hdr->count * sizeof(s32) ||
	    *len - minsz < hdr->count * sizeof(s32))
		return -EINVAL;
	*len = 0;

	mutex_lock(&vdev->lock);
	if (unmask)
		ret = vfio_pci_set_unmask_eventfds(vdev, hdr->index, hdr->count,
						   hdr->eventfds);
	else
		ret = vfio_pci_set_irq_eventfds(vdev, hdr->index, hdr->count,
						hdr->eventfds);
	mutex_unlock(&vdev->lock);
	return ret;
}

static long vfio_pci_ioctl_unmask(struct vfio_pci_device *vdev,
				  struct vfio_unmask_irq *un, u32 *len)
{
	long ret;

	if (un->flags)
		return -EINVAL;
	*len = 0;

	mutex_lock(&vdev->lock);
	ret = vfio_pci_unmask_irq(vdev, un->index, un->subindex);
	mutex_unlock(&vdev->lock);
	return ret;
}

/* VFIO_DEVICE_RESET of both ABIs. */
int vfio_pci_reset(struct vfio_pci_device *vdev)
{
	int ret;

	if (!vdev->reset_works)
		return -EINVAL;
	/*
	 * try_: a remove() waiting for this device holds its device lock
	 * and waits for us; sleeping on that lock would never end.
	 */
	mutex_lock(&vdev->lock);
	/*
	 * A reset turns decode off for its duration: no BAR access may
	 * reach the device meanwhile.  The restore at its end puts the
	 * command register back, and the mappings fault in again.
	 */
	down_write(&vdev->memory_lock);
	vfio_device_zap_mmaps(vdev->vfio);
	ret = vfio_pci_try_reset(vdev->pdev);
	vfio_pci_decode_sync(vdev);
	up_write(&vdev->memory_lock);
	mutex_unlock(&vdev->lock);
	return ret;
}

/*
 * The seed ABI's bus and slot reset, an extension in its header laid out
 * as the container ABI's (vfio_pci_hot_reset.c serves both).
 */
VFIO_PCI_HR_LAYOUT(vfio_pci_hot_reset_info, vfio_pci_hot_reset,
		   vfio_pci_dependent_device);

static long vfio_pci_ioctl(void *device_data, unsigned int cmd, void *arg,
			   u32 *len)
{
	struct vfio_pci_device *vdev = device_data;

	switch (cmd) {
	case VFIO_DEVICE_GET_INFO:
		return vfio_pci_get_info(vdev, arg, len);
	case VFIO_DEVICE_GET_REGION_INFO:
		return vfio_pci_get_region_info(vdev, arg, len);
	case VFIO_DEVICE_GET_IRQ_INFO:
		return vfio_pci_get_irq_info(vdev, arg, len);
	case VFIO_DEVICE_SET_IRQ_EVENTFDS:
		return vfio_pci_set_eventfds(vdev, arg, len, false);
	case VFIO_DEVICE_SET_UNMASK_IRQ_EVENTFDS:
		return vfio_pci_set_eventfds(vdev, arg, len, true);
	case VFIO_DEVICE_UNMASK_IRQ:
		return vfio_pci_ioctl_unmask(vdev, arg, len);
	case VFIO_DEVICE_RESET:
		return vfio_pci_reset(vdev);
	case VFIO_DEVICE_GET_PCI_HOT_RESET_INFO:
		return vfio_pci_ioctl_hot_reset_info(vdev, arg, len);
	case VFIO_DEVICE_PCI_HOT_RESET:
		return vfio_pci_ioctl_hot_reset(vdev, arg, len);
	}
	return -ENOTTY;
}

/* What each seed ioctl reads and writes of its argument. */
static const struct vfio_ioctl_desc vfio_pci_ioctls[] = {
	{ VFIO_DEVICE_GET_INFO,
	  offsetofend(struct vfio_device_info, num_irqs) },
	{ VFIO_DEVICE_GET_REGION_INFO,
	  offsetofend(struct vfio_region_info, offset) },
	{ VFIO_DEVICE_GET_IRQ_INFO,
	  offsetofend(struct vfio_irq_info, count) },
	{ VFIO_DEVICE_SET_IRQ_EVENTFDS, VFIO_PCI_EVENTFDS_MINSZ, 0,
	  vfio_pci_eventfds_datasz },
	{ VFIO_DEVICE_SET_UNMASK_IRQ_EVENTFDS, VFIO_PCI_EVENTFDS_MINSZ, 0,
	  vfio_pci_eventfds_datasz },
	{ VFIO_DEVICE_UNMASK_IRQ,
	  offsetofend(struct vfio_unmask_irq, subindex) },
	{ VFIO_DEVICE_RESET },
	{ VFIO_DEVICE_GET_PCI_HOT_RESET_INFO, VFIO_PCI_HR_MINSZ,
	  VFIO_PCI_HR_MINSZ + VFIO_IOCTL_DATA_MAX, NULL, true },
	{ VFIO_DEVICE_PCI_HOT_RESET, VFIO_PCI_HR_MINSZ, 0,
	  vfio_pci_hot_reset_datasz },
	{ }
};

static void vfio_pci_request(void *device_data, unsigned int count)
{
	struct vfio_pci_device *vdev = device_data;

	if (count == 1)
		pci_info(vdev->pdev, "asking the user to release the device\n");
	vfio_pci_signal_request(vdev);
}

static const struct vfio_device_ops vfio_pci_ops = {
	.owner		= THIS_MODULE,
	.match		= vfio_pci_match,
	.open		= vfio_pci_open,
	.release	= vfio_pci_release,
	.read		= vfio_pci_read,
	.write		= vfio_pci_write,
	.ioctl		= vfio_pci_ioctl,
	.ioctls		= vfio_pci_ioctls,
	.container_ioctl	= vfio_pci_container_ioctl,
	.container_ioctls	= vfio_pci_container_ioctls,
	.mmap		= vfio_pci_mmap,
	.request	= vfio_pci_request,
	.fault		= vfio_pci_fault,
};

/* ---------------- driver ---------------------------------------------- */

/*
 * Idle power, as the kernel's vfio-pci: a device that no user has open
 * is runtime suspended, which the PCI core does by itself once a driver
 * has PM ops at all (it saves config space, puts the device in D3hot
 * and restores both on resume).  The core's runtime reference held over
 * probe is given back at the end of probe; each open takes one and its
 * release gives it back.  A host access to config space through sysfs
 * resumes the device for its duration, as for any suspended device.
 */
static const struct dev_pm_ops vfio_pci_pm_ops = { };

static void vfio_pci_pm_init(struct vfio_pci_device *vdev)
{
	struct device *dev = &vdev->pdev->dev;

	/* After boot or another driver the state may be unknown: D0 first. */
	pci_set_power_state(vdev->pdev, PCI_D0);
	pm_runtime_allow(dev);
	if (vdev->idle_d3)
		pm_runtime_put(dev);
}

/* Before remove returns: the PCI core's references balance again. */
static void vfio_pci_pm_exit(struct vfio_pci_device *vdev)
{
	struct device *dev = &vdev->pdev->dev;

	if (vdev->idle_d3)
		pm_runtime_get_noresume(dev);
	pm_runtime_forbid(dev);
}

static int vfio_pci_probe(struct pci_dev *pdev, const struct pci_device_id *id)
{
	struct vfio_pci_device *vdev;
	struct iommu_group *group;
	bool isolated;
	int ret;

	/* Bridges own other devices' windows and bus numbers. */
	if (pdev->hdr_type != PCI_HEADER_TYPE_NORMAL)
		return -EINVAL;

	group = iommu_group_get(&pdev->dev);
	if (!group)
		return -ENODEV;
	isolated = vfio_group_has_isolated_msi(group, &pdev->dev);
	iommu_group_put(group);
	if (!isolated && !allow_unsafe_interrupts) {
		pci_warn(pdev, "no interrupt remapping: its MSIs could reach any vector; refusing (allow_unsafe_interrupts=1 overrides)\n");
		return -EPERM;
	}

	vdev = kzalloc(sizeof(*vdev), GFP_KERNEL);
	if (!vdev)
		return -ENOMEM;
	vdev->pdev = pdev;
	mutex_init(&vdev->lock);
	init_rwsem(&vdev->memory_lock);
	spin_lock_init(&vdev->irqlock);
	vdev->reset_works = vfio_pci_has_reset(pdev);
	/* What the driver it had before programmed into it. */
	vdev->needs_reset = true;
	vdev->msi_isolated = isolated;
	vdev->idle_d3 = !disable_idle_d3;
	vdev->vga = !disable_vga &&
		    (pdev->class >> 8) == PCI_CLASS_DISPLAY_VGA;
	vdev->sriov_pf = pdev->is_physfn;
	INIT_LIST_HEAD(&vdev->pf_next);
	pci_set_drvdata(pdev, vdev);
	vfio_pci_pm_init(vdev);

	ret = vfio_register_device(&pdev->dev, &vfio_pci_ops, vdev,
				   &vdev->vfio);
	if (ret) {
		vfio_pci_pm_exit(vdev);
		pci_set_drvdata(pdev, NULL);
		mutex_destroy(&vdev->lock);
		kfree(vdev);
		return ret;
	}
	if (vdev->sriov_pf) {
		mutex_lock(&vfio_pci_vf_token_lock);
		list_add(&vdev->pf_next, &vfio_pci_pfs);
		mutex_unlock(&vfio_pci_vf_token_lock);
	}
	return 0;
}

/*
 * A PF stays in D0 while it has VFs: they live inside it.  Enabling them
 * takes a runtime PM reference (vfio_pci_pm_ops), this gives it back.
 */
static void vfio_pci_sriov_disable(struct vfio_pci_device *vdev)
{
	struct pci_dev *pdev = vdev->pdev;

	if (!pdev->is_physfn || !pci_num_vf(pdev))
		return;
	pci_disable_sriov(pdev);
	if (vdev->idle_d3)
		pm_runtime_put(&pdev->dev);
}

static void vfio_pci_remove(struct pci_dev *pdev)
{
	struct vfio_pci_device *vdev = pci_get_drvdata(pdev);

	WRITE_ONCE(vdev->removing, true);
	/* Our VFs must not outlive the PF's binding, as a PF driver's. */
	vfio_pci_sriov_disable(vdev);
	/* Returns only once no op can run any more, release included. */
	vfio_unregister_device(&pdev->dev);
	/* Its VFs are gone, released and uncounted: no token state left. */
	mutex_lock(&vfio_pci_vf_token_lock);
	list_del_init(&vdev->pf_next);
	mutex_unlock(&vfio_pci_vf_token_lock);
	vfio_pci_pm_exit(vdev);
	pci_set_drvdata(pdev, NULL);
	mutex_destroy(&vdev->lock);
	kfree(vdev);
}

static bool vfio_pci_is_ours(const struct device_driver *drv);

/*
 * Whether a VF of @pdev is bound here and open by a user.  The PF's
 * device lock (held by our caller) keeps its VFs in place; each VF's
 * keeps its driver.  (pci_iov_virtfn_bus() is not exported: walk all
 * devices.)  An open that starts right after the check is not held off:
 * disabling the VFs then waits in our remove for its release, as it
 * would for any device removed while in use.
 */
static bool vfio_pci_vfs_in_use(struct pci_dev *pdev)
{
	struct pci_dev *vf = NULL;
	bool busy = false;

	for_each_pci_dev(vf) {
		struct vfio_pci_device *vdev;

		if (!vf->is_virtfn || pci_physfn(vf) != pdev)
			continue;
		device_lock(&vf->dev);
		if (vfio_pci_is_ours(vf->dev.driver)) {
			vdev = pci_get_drvdata(vf);
			mutex_lock(&vdev->lock);
			busy = vdev->enabled;
			mutex_unlock(&vdev->lock);
		}
		device_unlock(&vf->dev);
		if (busy) {
			pci_dev_put(vf);
			break;
		}
	}
	return busy;
}

/*
 * sriov_numvfs of a PF bound here; the PCI core holds the PF's device
 * lock.  Without enable_sriov, -ENOENT as for a driver that has no
 * sriov_configure (the kernel's vfio-pci does the same).  The VFs that
 * appear are claimed for vfio-pci by vfio_pci_bus_notify().  VFs a user
 * has open stay: -EBUSY.
 */
static int vfio_pci_sriov_configure(struct pci_dev *pdev, int nr_virtfn)
{
	struct vfio_pci_device *vdev = pci_get_drvdata(pdev);
	int ret;

	if (!enable_sriov) {
		pci_info(pdev, "sriov_numvfs: refused; load vfio_pci with enable_sriov=1 (or set /sys/module/vfio_pci/parameters/enable_sriov) to create VFs\n");
		return -ENOENT;
	}
	if (!nr_virtfn) {
		if (vfio_pci_vfs_in_use(pdev)) {
			pci_warn(pdev, "sriov_numvfs: a VF is open through vfio: not disabling VFs\n");
			return -EBUSY;
		}
		vfio_pci_sriov_disable(vdev);
		return 0;
	}
	if (vdev->idle_d3) {
		ret = pm_runtime_resume_and_get(&pdev->dev);
		if (ret < 0)
			return ret;
	}
	ret = pci_enable_sriov(pdev, nr_virtfn);
	if (ret) {
		if (vdev->idle_d3)
			pm_runtime_put(&pdev->dev);
		return ret;
	}
	return nr_virtfn;
}

/*
 * AER found an error on the device: tell the user through the container
 * ABI's error eventfd (VFIO_PCI_ERR_IRQ_INDEX) and let it recover, as
 * upstream does.  The PCI core holds the device lock, so remove cannot run.
 */
static pci_ers_result_t vfio_pci_error_detected(struct pci_dev *pdev,
						pci_channel_state_t state)
{
	struct vfio_pci_device *vdev = pci_get_drvdata(pdev);

	if (vdev)
		vfio_pci_notify_signal(vdev, VFIO_PCI_NOTIFY_ERR);
	return PCI_ERS_RESULT_CAN_RECOVER;
}

static const struct pci_error_handlers vfio_pci_err_handlers = {
	.error_detected		= vfio_pci_error_detected,
};

/*
 * No id table: devices come through new_id, driver_override or ids=.
 * The same driver goes by two names: "vfio", the seed ABI's, and
 * "vfio-pci", the one libvirt, DPDK and every how-to write to
 * driver_override or look for in /sys/bus/pci/drivers/.  A device bound
 * to either is ours and serves both ABIs.
 */
static struct pci_driver vfio_pci_driver = {
	.name			= "vfio",
	.probe			= vfio_pci_probe,
	.remove			= vfio_pci_remove,
	.sriov_configure	= vfio_pci_sriov_configure,
	.err_handler		= &vfio_pci_err_handlers,
	.driver_managed_dma	= true,
	.driver.pm		= &vfio_pci_pm_ops,
};

static struct pci_driver vfio_pci_alias_driver = {
	.name			= "vfio-pci",
	.probe			= vfio_pci_probe,
	.remove			= vfio_pci_remove,
	.sriov_configure	= vfio_pci_sriov_configure,
	.err_handler		= &vfio_pci_err_handlers,
	.driver_managed_dma	= true,
	.driver.pm		= &vfio_pci_pm_ops,
};

static bool vfio_pci_is_ours(const struct device_driver *drv)
{
	if (!drv)
		return false;
	return drv == &vfio_pci_driver.driver ||
	       drv == &vfio_pci_alias_driver.driver;
}

/*
 * A VF of a PF bound here must not meet a host driver either: the PF's
 * user programs what the VF does, and a host driver would trust it.
 * Claim it for "vfio-pci", as the kernel's vfio-pci does.  Whoever is
 * creating the VFs holds the PF's device lock, so its driver stays put.
 */
static void vfio_pci_claim_vf(struct pci_dev *pdev)
{
	int ret;

	if (!pdev->is_virtfn ||
	    !vfio_pci_is_ours(pci_physfn(pdev)->dev.driver))
		return;
	ret = vfio_pci_set_driver_override(pdev, vfio_pci_alias_driver.name);
	if (ret)
		pci_warn(pdev, "VF of a PF bound to vfio, but cannot claim it for vfio-pci: %d\n",
			 ret);
	else
		pci_info(pdev, "VF of a PF bound to vfio: claimed for vfio-pci\n");
}

/*
 * A device that appears in a group a user holds must never meet a host
 * driver: it would share the user's DMA context.  Claim it for "vfio" as
 * it is added, before the driver core looks for a driver.  A VF of a PF
 * bound here: see vfio_pci_claim_vf().
 */
static int vfio_pci_bus_notify(struct notifier_block *nb,
			       unsigned long action, void *data)
{
	struct device *dev = data;
	int ret;

	switch (action) {
	case BUS_NOTIFY_ADD_DEVICE:
		if (!vfio_group_add_dev(dev)) {
			vfio_pci_claim_vf(to_pci_dev(dev));
			break;
		}
		ret = vfio_pci_set_driver_override(to_pci_dev(dev),
						   vfio_pci_driver.name);
		if (ret)
			dev_warn(dev, "in a group in use, but cannot claim it for vfio: %d\n",
				 ret);
		else
			dev_info(dev, "claimed for vfio: its group is in use\n");
		break;
	case BUS_NOTIFY_DEL_DEVICE:
		/*
		 * PCI unbinds before it deletes; if we are still bound,
		 * our remove runs next and must not wait on the hold.
		 */
		vfio_group_del_dev(dev, !vfio_pci_is_ours(dev->driver));
		break;
	case BUS_NOTIFY_REMOVED_DEVICE:
		vfio_group_removed_dev(dev);
		break;
	}
	return NOTIFY_OK;
}

static struct notifier_block vfio_pci_nb = {
	.notifier_call = vfio_pci_bus_notify,
};

/*
 * One ids= entry, "vendor:device[:subvendor[:subdevice[:class[:class_mask]]]]",
 * each field hex.  Returns false when it is not that.
 */
static bool __init vfio_pci_parse_id(char *id, u32 field[6], int *nfields)
{
	char *f;
	int n = 0;

	while ((f = strsep(&id, ":"))) {
		if (n == 6 || kstrtou32(f, 16, &field[n]))
			return false;
		n++;
	}
	*nfields = n;
	return n >= 2;
}

/* ids=: the in-tree vfio-pci's way to claim devices at load time. */
static void __init vfio_pci_add_ids(void)
{
	char *p = ids, *id;

	while ((id = strsep(&p, ",\n"))) {
		u32 f[6] = { 0, 0, PCI_ANY_ID, PCI_ANY_ID, 0, 0 };
		char orig[64];
		int n, ret;

		if (!*id)
			continue;
		strscpy(orig, id, sizeof(orig));
		if (!vfio_pci_parse_id(id, f, &n)) {
			pr_warn("vfio_pci: ids: ignoring malformed entry \"%s\": want vendor:device[:subvendor[:subdevice[:class[:class_mask]]]] in hex\n",
				orig);
			continue;
		}
		ret = pci_add_dynid(&vfio_pci_alias_driver, f[0], f[1], f[2],
				    f[3], f[4], f[5], 0);
		if (ret)
			pr_warn("vfio_pci: ids: cannot add %04x:%04x (sub %04x:%04x, class %06x/%06x): %d\n",
				f[0], f[1], f[2], f[3], f[4], f[5], ret);
		else
			pr_info("vfio_pci: ids: added %04x:%04x (sub %04x:%04x, class %06x/%06x)\n",
				f[0], f[1], f[2], f[3], f[4], f[5]);
	}
}

static int __init vfio_pci_init(void)
{
	int ret;

	vfio_pci_check_guide_opts();
	ret = bus_register_notifier(&pci_bus_type, &vfio_pci_nb);
	if (ret)
		return ret;
	ret = pci_register_driver(&vfio_pci_driver);
	if (ret)
		goto err_notifier;
	ret = pci_register_driver(&vfio_pci_alias_driver);
	if (ret)
		goto err_driver;
	vfio_pci_add_ids();
	return 0;

err_driver:
	pci_unregister_driver(&vfio_pci_driver);
err_notifier:
	bus_unregister_notifier(&pci_bus_type, &vfio_pci_nb);
	return ret;
}

static void __exit vfio_pci_exit(void)
{
	pci_unregister_driver(&vfio_pci_alias_driver);
	pci_unregister_driver(&vfio_pci_driver);
	bus_unregister_notifier(&pci_bus_type, &vfio_pci_nb);
}

module_init(vfio_pci_init);
module_exit(vfio_pci_exit);

MODULE_VERSION(VFIO_DKMS_VERSION);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION(DRIVER_DESC);
MODULE_SOFTDEP("pre: vfio");
