/* SPDX-License-Identifier: MIT */
/*
 * The thresholds of the registration paths, each written once: the
 * conditions (conditions.c) test them, the probe (probe.c) asks whether
 * the driver has the PCIe mapping, and the messages name them.
 */
#ifndef GDR_THRESHOLDS_H
#define GDR_THRESHOLDS_H

#define KERNEL_DMABUF_MAJOR 5 /* Linux 5.12: dma-buf memory regions */
#define KERNEL_DMABUF_MINOR 12
/* Linux 5.13: fork copies pinned pages (IBV_FORK_UNNEEDED is possible) */
#define KERNEL_FORK_COPY_MAJOR 5
#define KERNEL_FORK_COPY_MINOR 13
#define CUDA_DMABUF_API 11070 /* CUDA 11.7: cuMemGetHandleForAddressRange */
#define CUDA_PCIE_MAPPING_API 12080 /* CUDA 12.8: the PCIe-mapped dma-buf */
/*
 * The open-files soft limit from which the doctor is content: a transport
 * that keeps each registration's dma-buf fd needs one per MR, and a few
 * tens of thousands of MRs are common (a KV cache's blocks); 1024, the
 * usual default, is not enough (ofiwg/libfabric#12828).
 */
#define NOFILE_MIN 65536
/* nvidia-fs 2.17.5: what the GPU Operator deploys for GPUDirect Storage,
 * and from which it needs the open kernel module. */
#define GDS_NVFS_MAJOR 2
#define GDS_NVFS_MINOR 17
#define GDS_NVFS_PATCH 5
#define GDS_NVFS_STR "2.17.5" /* the same, in words */
/* gdr-info --storage: the bytes read and written through cuFile per path,
 * and how long one step (an open, one read or write of those bytes) may
 * take before the doctor stops waiting for it. */
#define GDS_IO_BYTES (64ULL << 20)
#define GDS_IO_STEP_TIMEOUT_S 30
/* BAR1 counts as nearly used up from this share of it, in percent. */
#define BAR1_NEARLY_FULL_PERCENT 90

#endif /* GDR_THRESHOLDS_H */
