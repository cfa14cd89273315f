// SPDX-License-Identifier: GPL-2.0-only
/*
 * vfio-dkms PCI bus driver: interrupts.
 *
 * INTx is level triggered, so each delivery masks it (INTx disable in the
 * command register on PCI 2.3 devices, the IRQ line otherwise) until the
 * user has serviced the device and unmasks it, by ioctl or by writing an
 * unmask eventfd.  MSI and MSI-X are edge triggered: every vector simply
 * signals its eventfd.  Only one of INTx, MSI and MSI-X can be active.
 *
 * Callers hold vdev->lock for everything except the IRQ handlers, the
 * unmask work and vfio_pci_signal_request().
 */
#include <linux/eventfd.h>
#include <linux/file.h>
#include <linux/interrupt.h>
#include <linux/pci.h>
#include <linux/poll.h>
#include <linux/slab.h>

#include "../compat.h"
#include "../include/uapi/vfio.h"
#include "vfio_pci_private.h"

/* How many IRQs of @type the device has: the ABI-neutral part of the count. */
unsigned int vfio_pci_vec_count(struct vfio_pci_device *vdev,
				enum vfio_pci_irq_type type)
{
	struct pci_dev *pdev = vdev->pdev;
	int n = 0;

	switch (type) {
	case VFIO_PCI_IRQ_INTX:
		/* A VF has no INTx, whatever its pin register says. */
		n = pdev->pin && !pdev->is_virtfn ? 1 : 0;
		break;
	case VFIO_PCI_IRQ_MSI:
		n = pci_msi_vec_count(pdev);
		break;
	case VFIO_PCI_IRQ_MSIX:
		n = pci_msix_vec_count(pdev);
		break;
	case VFIO_PCI_IRQ_NONE:
		break;
	}
	return n > 0 ? n : 0;
}

static_assert(VFIO_PCI_INTX_IRQ_INDEX == 0 && VFIO_PCI_MSI_IRQ_INDEX == 1 &&
	      VFIO_PCI_MSIX_IRQ_INDEX == 2);

/*
 * The IRQ type of an IRQ index of either ABI: both number INTx, MSI and
 * MSI-X 0, 1 and 2; their other indexes (REQ, the container ABI's ERR)
 * have none.
 */
enum vfio_pci_irq_type vfio_pci_index_type(unsigned int index)
{
	switch (index) {
	case VFIO_PCI_INTX_IRQ_INDEX:
		return VFIO_PCI_IRQ_INTX;
	case VFIO_PCI_MSI_IRQ_INDEX:
		return VFIO_PCI_IRQ_MSI;
	case VFIO_PCI_MSIX_IRQ_INDEX:
		return VFIO_PCI_IRQ_MSIX;
	}
	return VFIO_PCI_IRQ_NONE;
}

/* The seed ABI's count of an IRQ index. */
int vfio_pci_irq_count(struct vfio_pci_device *vdev, unsigned int index)
{
	if (index == VFIO_PCI_REQ_IRQ_INDEX)
		return 1;
	return vfio_pci_vec_count(vdev, vfio_pci_index_type(index));
}

/*
 * Set the real INTx disable bit.  Under irqlock so that it cannot race
 * with the read-modify-write the INTx handler does on the same register.
 */
static void __vfio_pci_set_intx_disable(struct vfio_pci_device *vdev,
					bool disable)
{
	struct pci_dev *pdev = vdev->pdev;
	u16 cmd, new;

	lockdep_assert_held(&vdev->irqlock);
	pci_read_config_word(pdev, PCI_COMMAND, &cmd);
	new = disable ? cmd | PCI_COMMAND_INTX_DISABLE :
			cmd & ~PCI_COMMAND_INTX_DISABLE;
	if (new != cmd)
		pci_write_config_word(pdev, PCI_COMMAND, new);
}

static void vfio_pci_set_intx_disable(struct vfio_pci_device *vdev,
				      bool disable)
{
	unsigned long flags;

	spin_lock_irqsave(&vdev->irqlock, flags);
	__vfio_pci_set_intx_disable(vdev, disable);
	spin_unlock_irqrestore(&vdev->irqlock, flags);
}

/* ---------------- INTx ------------------------------------------------ */

static irqreturn_t vfio_pci_intx_handler(int irq, void *arg)
{
	struct vfio_pci_device *vdev = arg;
	irqreturn_t ret = IRQ_NONE;
	unsigned long flags;

	spin_lock_irqsave(&vdev->irqlock, flags);
	if (!vdev->pci_2_3) {
		/* The line is ours alone (requested without IRQF_SHARED). */
		disable_irq_nosync(irq);
		vdev->intx_masked = true;
		ret = IRQ_HANDLED;
	} else if (!vdev->intx_masked && pci_check_and_mask_intx(vdev->pdev)) {
		vdev->intx_masked = true;
		ret = IRQ_HANDLED;
	}
	if (ret == IRQ_HANDLED && vdev->intx_trigger)
		vfio_eventfd_signal(vdev->intx_trigger);
	spin_unlock_irqrestore(&vdev->irqlock, flags);

	return ret;
}

static void vfio_pci_intx_unmask(struct vfio_pci_device *vdev)
{
	unsigned long flags;

	spin_lock_irqsave(&vdev->irqlock, flags);
	if (vdev->intx_masked) {
		if (!vdev->pci_2_3) {
			vdev->intx_masked = false;
			enable_irq(vdev->pdev->irq);
		} else if (pci_check_and_unmask_intx(vdev->pdev)) {
			vdev->intx_masked = false;
		} else if (vdev->intx_trigger) {
			/*
			 * The device still asserts the line: stay masked and
			 * tell the user again, as a level IRQ would.
			 */
			vfio_eventfd_signal(vdev->intx_trigger);
		}
	}
	spin_unlock_irqrestore(&vdev->irqlock, flags);
}

/*
 * Mask INTx as a delivery would (VFIO_IRQ_SET_ACTION_MASK): it stays
 * masked until the user unmasks it.  Both steps under irqlock, so that
 * the handler never sees "masked" while the device could still assert.
 */
int vfio_pci_intx_mask(struct vfio_pci_device *vdev)
{
	lockdep_assert_held(&vdev->lock);

	if (vdev->irq_type != VFIO_PCI_IRQ_INTX)
		return -EINVAL;
	spin_lock_irq(&vdev->irqlock);
	if (!vdev->intx_masked) {
		if (vdev->pci_2_3)
			__vfio_pci_set_intx_disable(vdev, true);
		else
			disable_irq_nosync(vdev->pdev->irq);
		vdev->intx_masked = true;
	}
	spin_unlock_irq(&vdev->irqlock);
	return 0;
}

static void vfio_pci_unmask_work(struct work_struct *work)
{
	struct vfio_pci_unmask *u = container_of(work, struct vfio_pci_unmask,
						 work);

	vfio_pci_intx_unmask(u->vdev);
}

/*
 * Runs under the eventfd's wait queue lock, possibly in IRQ context: only
 * consume the count and defer the unmask, which takes irqlock (the INTx
 * handler signals eventfds under irqlock, so taking it here would invert
 * the order).  EPOLLHUP (the user closed the eventfd) is ignored: our ctx
 * reference keeps the wait queue alive until teardown.
 */
static int vfio_pci_unmask_wakeup(wait_queue_entry_t *wait, unsigned int mode,
				  int sync, void *key)
{
	struct vfio_pci_unmask *u = container_of(wait, struct vfio_pci_unmask,
						 wait);
	__poll_t events = key_to_poll(key);
	u64 cnt;

	if (events & EPOLLIN) {
		eventfd_ctx_do_read(u->ctx, &cnt);
		schedule_work(&u->work);
	}
	return 0;
}

static void vfio_pci_unmask_queue(struct file *file, wait_queue_head_t *wqh,
				  poll_table *pt)
{
	struct vfio_pci_unmask *u = container_of(pt, struct vfio_pci_unmask,
						 pt);

	add_wait_queue(wqh, &u->wait);
}

static void vfio_pci_unmask_teardown(struct vfio_pci_device *vdev)
{
	struct vfio_pci_unmask *u = vdev->unmask;
	u64 cnt;

	if (!u)
		return;
	/* After this no wakeup can queue the work again. */
	eventfd_ctx_remove_wait_queue(u->ctx, &u->wait, &cnt);
	cancel_work_sync(&u->work);
	eventfd_ctx_put(u->ctx);
	kfree(u);
	vdev->unmask = NULL;
}

/* Hook the eventfd @file (a reference the caller keeps) up as unmask. */
static int vfio_pci_unmask_setup(struct vfio_pci_device *vdev,
				 struct file *file)
{
	struct vfio_pci_unmask *u;
	__poll_t events;

	u = kzalloc(sizeof(*u), GFP_KERNEL);
	if (!u)
		return -ENOMEM;
	u->ctx = eventfd_ctx_fileget(file);
	if (IS_ERR(u->ctx)) {
		int ret = PTR_ERR(u->ctx);

		kfree(u);
		return ret;
	}
	u->vdev = vdev;
	INIT_WORK(&u->work, vfio_pci_unmask_work);
	init_waitqueue_func_entry(&u->wait, vfio_pci_unmask_wakeup);
	init_poll_funcptr(&u->pt, vfio_pci_unmask_queue);
	vdev->unmask = u;

	events = vfs_poll(file, &u->pt);
	/* A write that came before we were listening still counts. */
	if (events & EPOLLIN)
		schedule_work(&u->work);
	return 0;
}

static int vfio_pci_intx_enable(struct vfio_pci_device *vdev,
				struct eventfd_ctx *trigger)
{
	struct pci_dev *pdev = vdev->pdev;
	unsigned long irqflags;
	char *name;
	int ret;

	if (!pdev->irq)
		return -ENODEV;
	name = kasprintf(GFP_KERNEL, "vfio-intx(%s)", pci_name(pdev));
	if (!name)
		return -ENOMEM;

	vdev->intx_masked = false;
	vdev->intx_trigger = trigger;
	/* Without INTx masking the only way to mask is the whole line. */
	irqflags = vdev->pci_2_3 ? IRQF_SHARED : 0;
	if (vdev->pci_2_3)
		vfio_pci_set_intx_disable(vdev, false);

	ret = request_irq(pdev->irq, vfio_pci_intx_handler, irqflags, name,
			  vdev);
	if (ret) {
		vdev->intx_trigger = NULL;
		kfree(name);
		return ret;
	}
	vdev->intx_name = name;
	vdev->irq_type = VFIO_PCI_IRQ_INTX;
	return 0;
}

static void vfio_pci_intx_disable(struct vfio_pci_device *vdev)
{
	struct pci_dev *pdev = vdev->pdev;
	struct eventfd_ctx *trigger;

	vfio_pci_unmask_teardown(vdev);
	/*
	 * A line left disabled by the handler needs no enable_irq(): when
	 * its last action goes, the IRQ core shuts the line down and resets
	 * its disable depth.
	 */
	free_irq(pdev->irq, vdev);

	spin_lock_irq(&vdev->irqlock);
	trigger = vdev->intx_trigger;
	vdev->intx_trigger = NULL;
	vdev->intx_masked = false;
	spin_unlock_irq(&vdev->irqlock);
	if (trigger)
		eventfd_ctx_put(trigger);

	kfree(vdev->intx_name);
	vdev->intx_name = NULL;
	vdev->irq_type = VFIO_PCI_IRQ_NONE;
	/* The user owns the INTx disable bit again. */
	if (vdev->pci_2_3)
		vfio_pci_set_intx_disable(vdev, vdev->vcmd_intx);
}

/* Consumes the reference on @trigger (may be NULL: unconnected). */
static int vfio_pci_intx_set(struct vfio_pci_device *vdev,
			     struct eventfd_ctx *trigger)
{
	struct eventfd_ctx *old;
	int ret;

	/* See vfio_pci_set_unmask_eventfds(). */
	if (trigger && vdev->unmask && vdev->unmask->ctx == trigger) {
		eventfd_ctx_put(trigger);
		return -EINVAL;
	}

	if (vdev->irq_type == VFIO_PCI_IRQ_INTX) {
		spin_lock_irq(&vdev->irqlock);
		old = vdev->intx_trigger;
		vdev->intx_trigger = trigger;
		spin_unlock_irq(&vdev->irqlock);
		/* The handler only uses the trigger under irqlock. */
		if (old)
			eventfd_ctx_put(old);
		return 0;
	}

	ret = vfio_pci_intx_enable(vdev, trigger);
	if (ret && trigger)
		eventfd_ctx_put(trigger);
	return ret;
}

/* ---------------- MSI and MSI-X --------------------------------------- */

static void vfio_pci_put_ctxs(struct eventfd_ctx **ctxs, unsigned int count)
{
	unsigned int i;

	for (i = 0; i < count; i++)
		if (ctxs[i])
			eventfd_ctx_put(ctxs[i]);
}

static irqreturn_t vfio_pci_msi_handler(int irq, void *arg)
{
	struct vfio_pci_vector *v = arg;
	struct eventfd_ctx *trigger = READ_ONCE(v->trigger);

	/* Unconnected vectors are requested too, and swallowed here. */
	if (trigger)
		vfio_eventfd_signal(trigger);
	return IRQ_HANDLED;
}

/* Consumes the reference on @trigger (may be NULL: unconnected). */
static void vfio_pci_vector_set(struct vfio_pci_vector *v,
				struct eventfd_ctx *trigger)
{
	struct eventfd_ctx *old = v->trigger;

	WRITE_ONCE(v->trigger, trigger);
	if (old) {
		/* A handler that still saw the old eventfd is done after. */
		synchronize_irq(v->irq);
		eventfd_ctx_put(old);
	}
}

static void vfio_pci_msi_free(struct vfio_pci_device *vdev, unsigned int n)
{
	unsigned int i;

	for (i = 0; i < n; i++) {
		struct vfio_pci_vector *v = &vdev->vectors[i];

		free_irq(v->irq, v);
		if (v->trigger)
			eventfd_ctx_put(v->trigger);
		kfree(v->name);
	}
	pci_free_irq_vectors(vdev->pdev);
	kfree(vdev->vectors);
	vdev->vectors = NULL;
	vdev->num_vectors = 0;
}

static void vfio_pci_msi_disable(struct vfio_pci_device *vdev)
{
	u16 cmd;

	/* Freeing masks MSI-X vectors: a write to the table in a BAR. */
	cmd = vfio_pci_memory_lock_and_enable(vdev);
	vfio_pci_msi_free(vdev, vdev->num_vectors);
	vfio_pci_memory_unlock_and_restore(vdev, cmd);
	vdev->irq_type = VFIO_PCI_IRQ_NONE;
	/* Disabling MSI re-enabled INTx; the user's bit rules again. */
	if (vdev->pci_2_3)
		vfio_pci_set_intx_disable(vdev, vdev->vcmd_intx);
}

/*
 * Every vector gets its handler at once, connected or not: a requested
 * IRQ is what makes the kernel program the vector's message, and a device
 * firing an unprogrammed vector would DMA to address 0.
 */
static int __vfio_pci_msi_enable(struct vfio_pci_device *vdev,
				 enum vfio_pci_irq_type type,
				 unsigned int count)
{
	struct pci_dev *pdev = vdev->pdev;
	bool msix = type == VFIO_PCI_IRQ_MSIX;
	unsigned int i;
	int ret;

	vdev->vectors = kcalloc(count, sizeof(*vdev->vectors), GFP_KERNEL);
	if (!vdev->vectors)
		return -ENOMEM;
	ret = pci_alloc_irq_vectors(pdev, count, count,
				    msix ? PCI_IRQ_MSIX : PCI_IRQ_MSI);
	if (ret < 0) {
		kfree(vdev->vectors);
		vdev->vectors = NULL;
		return ret;
	}

	for (i = 0; i < count; i++) {
		struct vfio_pci_vector *v = &vdev->vectors[i];

		v->irq = pci_irq_vector(pdev, i);
		v->name = kasprintf(GFP_KERNEL, "vfio-msi%s[%u](%s)",
				    msix ? "x" : "", i, pci_name(pdev));
		if (!v->name) {
			ret = -ENOMEM;
			break;
		}
		ret = request_irq(v->irq, vfio_pci_msi_handler, 0, v->name, v);
		if (ret) {
			kfree(v->name);
			break;
		}
	}
	if (ret) {
		vfio_pci_msi_free(vdev, i);
		return ret;
	}
	vdev->num_vectors = count;
	vdev->irq_type = type;
	return 0;
}

/*
 * Setting up MSI-X vectors writes their table, in a BAR, whatever the
 * user's memory decode: turn it on meanwhile (memory_lock hides it).
 */
static int vfio_pci_msi_enable(struct vfio_pci_device *vdev,
			       enum vfio_pci_irq_type type, unsigned int count)
{
	u16 cmd;
	int ret;

	cmd = vfio_pci_memory_lock_and_enable(vdev);
	ret = __vfio_pci_msi_enable(vdev, type, count);
	vfio_pci_memory_unlock_and_restore(vdev, cmd);
	return ret;
}

/*
 * Connect @ctxs (references consumed; NULL: unconnected) to the vectors
 * [@start, @start + @count) of @type, enabling it with @start + @count
 * vectors when no IRQ is on.  MSI cannot grow or shrink while enabled:
 * with @resize (the seed ABI) a different size starts over, without it
 * (the container ABI, as upstream before dynamic MSI-X) a range beyond the
 * allocated vectors is -EINVAL and changes nothing.
 */
static int vfio_pci_msi_set(struct vfio_pci_device *vdev,
			    enum vfio_pci_irq_type type, unsigned int start,
			    unsigned int count, struct eventfd_ctx **ctxs,
			    bool resize)
{
	unsigned int end = start + count;
	unsigned int i;
	int ret;

	if (vdev->irq_type == type && vdev->num_vectors != end && resize)
		vfio_pci_msi_disable(vdev);
	if (vdev->irq_type == type && end > vdev->num_vectors) {
		vfio_pci_put_ctxs(ctxs, count);
		return -EINVAL;
	}
	if (vdev->irq_type == VFIO_PCI_IRQ_NONE) {
		ret = vfio_pci_msi_enable(vdev, type, end);
		if (ret) {
			vfio_pci_put_ctxs(ctxs, count);
			return ret;
		}
	}
	for (i = 0; i < count; i++)
		vfio_pci_vector_set(&vdev->vectors[start + i], ctxs[i]);
	return 0;
}

/* ---------------- error and release request --------------------------- */

static struct eventfd_ctx **vfio_pci_notify_slot(struct vfio_pci_device *vdev,
						 enum vfio_pci_notify which)
{
	return which == VFIO_PCI_NOTIFY_ERR ? &vdev->err_trigger :
					      &vdev->req_trigger;
}

/* Consumes the reference on @trigger (may be NULL: disconnect). */
static void vfio_pci_notify_set(struct vfio_pci_device *vdev,
				enum vfio_pci_notify which,
				struct eventfd_ctx *trigger)
{
	struct eventfd_ctx **slot = vfio_pci_notify_slot(vdev, which);
	struct eventfd_ctx *old;

	spin_lock_irq(&vdev->irqlock);
	old = *slot;
	*slot = trigger;
	spin_unlock_irq(&vdev->irqlock);
	if (old)
		eventfd_ctx_put(old);
}

/* Connect the eventfd @fd, or disconnect with -1. */
int vfio_pci_notify_set_fd(struct vfio_pci_device *vdev,
			   enum vfio_pci_notify which, s32 fd)
{
	struct eventfd_ctx *trigger = NULL;

	lockdep_assert_held(&vdev->lock);

	if (fd != -1) {
		trigger = eventfd_ctx_fdget(fd);
		if (IS_ERR(trigger))
			return PTR_ERR(trigger);
	}
	vfio_pci_notify_set(vdev, which, trigger);
	return 0;
}

/* Stable under vdev->lock, which every writer holds. */
bool vfio_pci_notify_present(struct vfio_pci_device *vdev,
			     enum vfio_pci_notify which)
{
	lockdep_assert_held(&vdev->lock);
	return *vfio_pci_notify_slot(vdev, which);
}

/* Signal the eventfd if there is one; returns whether there was. */
bool vfio_pci_notify_signal(struct vfio_pci_device *vdev,
			    enum vfio_pci_notify which)
{
	struct eventfd_ctx **slot = vfio_pci_notify_slot(vdev, which);
	unsigned long flags;
	bool signalled = false;

	spin_lock_irqsave(&vdev->irqlock, flags);
	if (*slot) {
		vfio_eventfd_signal(*slot);
		signalled = true;
	}
	spin_unlock_irqrestore(&vdev->irqlock, flags);
	return signalled;
}

void vfio_pci_signal_request(struct vfio_pci_device *vdev)
{
	if (!vfio_pci_notify_signal(vdev, VFIO_PCI_NOTIFY_REQ))
		dev_notice_ratelimited(&vdev->pdev->dev,
				       "release requested, no eventfd to tell the user\n");
}

/* ---------------- ioctl entry points ---------------------------------- */

/* Resolve every fd first, so that a bad one changes nothing. */
static int vfio_pci_get_ctxs(const s32 *fds, unsigned int count,
			     struct eventfd_ctx **ctxs)
{
	unsigned int i;

	for (i = 0; i < count; i++) {
		if (fds[i] == -1)
			continue;
		ctxs[i] = eventfd_ctx_fdget(fds[i]);
		if (IS_ERR(ctxs[i])) {
			int ret = PTR_ERR(ctxs[i]);

			ctxs[i] = NULL;
			vfio_pci_put_ctxs(ctxs, i);
			return ret;
		}
	}
	return 0;
}

/*
 * Connect the eventfds @fds (-1: unconnected) to [@start, @start + @count)
 * of @type, enabling it if no IRQ is on.  -EBUSY when another type is on.
 * INTx takes only start 0, count 1 (the callers check).
 */
static int vfio_pci_set_fds(struct vfio_pci_device *vdev,
			    enum vfio_pci_irq_type type, unsigned int start,
			    unsigned int count, const s32 *fds, bool resize)
{
	struct eventfd_ctx **ctxs;
	int ret;

	if (vdev->irq_type != VFIO_PCI_IRQ_NONE && vdev->irq_type != type)
		return -EBUSY;

	ctxs = kcalloc(count, sizeof(*ctxs), GFP_KERNEL);
	if (!ctxs)
		return -ENOMEM;
	ret = vfio_pci_get_ctxs(fds, count, ctxs);
	if (ret)
		goto out;

	if (type == VFIO_PCI_IRQ_INTX)
		ret = vfio_pci_intx_set(vdev, ctxs[0]);
	else
		ret = vfio_pci_msi_set(vdev, type, start, count, ctxs, resize);
out:
	kfree(ctxs);
	return ret;
}

/* Turn @type off if it is on, freeing its IRQs and eventfds. */
void vfio_pci_irq_disable(struct vfio_pci_device *vdev,
			  enum vfio_pci_irq_type type)
{
	lockdep_assert_held(&vdev->lock);

	if (type != vdev->irq_type)
		return;
	if (type == VFIO_PCI_IRQ_INTX)
		vfio_pci_intx_disable(vdev);
	else if (type != VFIO_PCI_IRQ_NONE)
		vfio_pci_msi_disable(vdev);
}

/*
 * VFIO_DEVICE_SET_IRQS, ACTION_TRIGGER with DATA_EVENTFD: @count >= 1
 * and [@start, @start + @count) within the device's IRQs of @type.
 */
int vfio_pci_irq_set_triggers(struct vfio_pci_device *vdev,
			      enum vfio_pci_irq_type type, unsigned int start,
			      unsigned int count, const s32 *fds)
{
	lockdep_assert_held(&vdev->lock);

	if (type == VFIO_PCI_IRQ_NONE || !count ||
	    (type == VFIO_PCI_IRQ_INTX && (start || count != 1)))
		return -EINVAL;
	/* Upstream's errno for "another type is on", where the seed's is EBUSY. */
	if (vdev->irq_type != VFIO_PCI_IRQ_NONE && vdev->irq_type != type)
		return -EINVAL;
	return vfio_pci_set_fds(vdev, type, start, count, fds, false);
}

/*
 * Loopback (ACTION_TRIGGER with DATA_NONE or DATA_BOOL): signal the
 * eventfds of [@start, @start + @count) of @type, all of them or those
 * whose @bools byte is set.  Only while @type is on, and only allocated
 * vectors; an unconnected one is skipped.
 */
int vfio_pci_irq_fire(struct vfio_pci_device *vdev,
		      enum vfio_pci_irq_type type, unsigned int start,
		      unsigned int count, const u8 *bools)
{
	unsigned int i;

	lockdep_assert_held(&vdev->lock);

	if (type == VFIO_PCI_IRQ_NONE || vdev->irq_type != type)
		return -EINVAL;
	if (type == VFIO_PCI_IRQ_INTX) {
		if (start || count != 1)
			return -EINVAL;
		spin_lock_irq(&vdev->irqlock);
		if (vdev->intx_trigger && (!bools || bools[0]))
			vfio_eventfd_signal(vdev->intx_trigger);
		spin_unlock_irq(&vdev->irqlock);
		return 0;
	}
	if (start > vdev->num_vectors || count > vdev->num_vectors - start)
		return -EINVAL;
	/* Triggers change only under vdev->lock, which we hold. */
	for (i = 0; i < count; i++) {
		struct eventfd_ctx *trigger = vdev->vectors[start + i].trigger;

		if (trigger && (!bools || bools[i]))
			vfio_eventfd_signal(trigger);
	}
	return 0;
}

/*
 * VFIO_DEVICE_SET_IRQ_EVENTFDS: @count was checked against the index's
 * IRQ count; count 0 disables the index.
 */
int vfio_pci_set_irq_eventfds(struct vfio_pci_device *vdev,
			      unsigned int index, unsigned int count,
			      const s32 *fds)
{
	enum vfio_pci_irq_type type;

	lockdep_assert_held(&vdev->lock);

	if (index == VFIO_PCI_REQ_IRQ_INDEX)
		return vfio_pci_notify_set_fd(vdev, VFIO_PCI_NOTIFY_REQ,
					      count ? fds[0] : -1);

	type = vfio_pci_index_type(index);
	if (!count) {
		vfio_pci_irq_disable(vdev, type);
		return 0;
	}
	return vfio_pci_set_fds(vdev, type, 0, count, fds, true);
}

/*
 * Connect the eventfd @fd as INTx's unmask (-1: disconnect).  INTx must
 * be on.
 */
int vfio_pci_intx_set_unmask_fd(struct vfio_pci_device *vdev, s32 fd)
{
	struct eventfd_ctx *ctx;
	struct file *file = NULL;
	bool same;
	int ret = 0;

	lockdep_assert_held(&vdev->lock);

	if (vdev->irq_type != VFIO_PCI_IRQ_INTX)
		return -EINVAL;

	if (fd != -1) {
		file = eventfd_fget(fd);
		if (IS_ERR(file))
			return PTR_ERR(file);
		/*
		 * The trigger as its own unmask: an unmask that finds the
		 * line still up signals the trigger, which would queue the
		 * unmask again, in a loop for as long as the device asserts.
		 */
		ctx = eventfd_ctx_fileget(file);
		same = ctx == vdev->intx_trigger;
		eventfd_ctx_put(ctx);
		if (same) {
			fput(file);
			return -EINVAL;
		}
	}
	vfio_pci_unmask_teardown(vdev);
	if (file) {
		ret = vfio_pci_unmask_setup(vdev, file);
		fput(file);
	}
	return ret;
}

/* VFIO_DEVICE_SET_UNMASK_IRQ_EVENTFDS: only INTx is level triggered. */
int vfio_pci_set_unmask_eventfds(struct vfio_pci_device *vdev,
				 unsigned int index, unsigned int count,
				 const s32 *fds)
{
	if (index != VFIO_PCI_INTX_IRQ_INDEX || count > 1)
		return -EINVAL;
	return vfio_pci_intx_set_unmask_fd(vdev, count ? fds[0] : -1);
}

/* Unmask INTx now, as the user's ioctl asks.  INTx must be on. */
int vfio_pci_intx_unmask_user(struct vfio_pci_device *vdev)
{
	lockdep_assert_held(&vdev->lock);

	if (vdev->irq_type != VFIO_PCI_IRQ_INTX)
		return -EINVAL;
	vfio_pci_intx_unmask(vdev);
	return 0;
}

int vfio_pci_unmask_irq(struct vfio_pci_device *vdev, unsigned int index,
			unsigned int subindex)
{
	if (index != VFIO_PCI_INTX_IRQ_INDEX || subindex != 0)
		return -EINVAL;
	return vfio_pci_intx_unmask_user(vdev);
}

/* From release: nothing may fire or hold an eventfd afterwards. */
void vfio_pci_irqs_disable_all(struct vfio_pci_device *vdev)
{
	lockdep_assert_held(&vdev->lock);

	vfio_pci_irq_disable(vdev, vdev->irq_type);
	vfio_pci_notify_set(vdev, VFIO_PCI_NOTIFY_ERR, NULL);
	vfio_pci_notify_set(vdev, VFIO_PCI_NOTIFY_REQ, NULL);
}
