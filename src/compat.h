/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * vfio-dkms: every kernel-version difference lives here, so that the rest
 * of the code is written against one API.  Supported: 6.1 .. 6.12.
 */
#ifndef VFIO_DKMS_COMPAT_H
#define VFIO_DKMS_COMPAT_H

#include <linux/version.h>
#include <linux/device.h>
#include <linux/eventfd.h>
#include <linux/iommu.h>
#include <linux/mm.h>
#include <linux/msi.h>
#include <linux/irqdomain.h>
#include <linux/pci.h>
#include <linux/string.h>

/* class_create() lost its owner argument in 6.4. */
static inline struct class *vfio_class_create(const char *name)
{
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 4, 0)
	return class_create(name);
#else
	return class_create(THIS_MODULE, name);
#endif
}

/* The devnode callback takes a const device since 6.2. */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 2, 0)
#define vfio_devnode_dev const struct device
#else
#define vfio_devnode_dev struct device
#endif

/* iommu_paging_domain_alloc() replaced iommu_domain_alloc(bus) in 6.11. */
static inline struct iommu_domain *vfio_domain_alloc(struct device *dev)
{
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 11, 0)
	struct iommu_domain *domain = iommu_paging_domain_alloc(dev);

	return IS_ERR(domain) ? NULL : domain;
#else
	return iommu_domain_alloc(dev->bus);
#endif
}

/* iommu_map() takes a gfp mask since 6.3. */
static inline int vfio_iommu_map(struct iommu_domain *domain,
				 unsigned long iova, phys_addr_t paddr,
				 size_t size, int prot)
{
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 3, 0)
	return iommu_map(domain, iova, paddr, size, prot, GFP_KERNEL_ACCOUNT);
#else
	return iommu_map(domain, iova, paddr, size, prot);
#endif
}

/*
 * Can a device of @group raise an MSI that reaches only the vectors its
 * owner set up?  6.1 asks the IOMMU for interrupt remapping (or the IRQ
 * domain for MSI remapping); 6.3 turned both into "isolated MSI".
 */
static inline bool vfio_group_has_isolated_msi(struct iommu_group *group,
					       struct device *dev)
{
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 3, 0)
	return iommu_group_has_isolated_msi(group);
#else
	return device_iommu_capable(dev, IOMMU_CAP_INTR_REMAP) ||
	       irq_domain_check_msi_remap();
#endif
}

/* eventfd_signal() lost its count in 6.8. */
static inline void vfio_eventfd_signal(struct eventfd_ctx *ctx)
{
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 8, 0)
	eventfd_signal(ctx);
#else
	eventfd_signal(ctx, 1);
#endif
}

/* vm_flags became read-only behind vm_flags_set() in 6.3. */
static inline void vfio_vm_flags_set(struct vm_area_struct *vma,
				     unsigned long flags)
{
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 3, 0)
	vm_flags_set(vma, flags);
#else
	vma->vm_flags |= flags;
#endif
}

/*
 * driver_override moved from struct pci_dev into struct device, with its
 * own lock and setter, in the generic driver_override rework; Debian's
 * 6.12 took it with stable 6.12.91.  (6.13 .. the mainline release that
 * has it are not supported.)
 */
static inline int vfio_pci_set_driver_override(struct pci_dev *pdev,
					       const char *name)
{
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 12, 91)
	return device_set_driver_override(&pdev->dev, name);
#else
	return driver_set_override(&pdev->dev, &pdev->driver_override, name,
				   strlen(name));
#endif
}

#endif /* VFIO_DKMS_COMPAT_H */
