/* SPDX-License-Identifier: MIT */
/*
 * Compiled with -Werror next to gpudirect.h: declares every type, constant
 * and function name that gdrcopy's gdrapi.h puts in the global namespace
 * (our own declarations, shaped like theirs). Any clash with the public
 * header is a compile error, so this test fails.
 */
#include <gpudirect.h>

#include <stddef.h>
#include <stdint.h>

struct gdr;
typedef struct gdr *gdr_t;
typedef struct gdr_mh_s {
	unsigned long h;
} gdr_mh_t;
typedef enum gdr_mapping_type {
	GDR_MAPPING_TYPE_NONE = 0,
	GDR_MAPPING_TYPE_WC = 1,
	GDR_MAPPING_TYPE_CACHING = 2,
	GDR_MAPPING_TYPE_DEVICE = 3
} gdr_mapping_type_t;
typedef struct gdr_info {
	uint64_t va;
	uint64_t mapped_size;
	uint32_t page_size;
	uint64_t tm_cycles;
	uint32_t cycles_per_ms;
	unsigned mapped : 1;
	unsigned wc_mapping : 1;
	gdr_mapping_type_t mapping_type;
} gdr_info_t;
typedef enum gdr_attr {
	GDR_ATTR_USE_PERSISTENT_MAPPING = 1,
	GDR_ATTR_SUPPORT_PIN_FLAG_FORCE_PCIE = 2,
	GDR_ATTR_MAX
} gdr_attr_t;
typedef enum gdr_pin_flags {
	GDR_PIN_FLAG_DEFAULT = 0,
	GDR_PIN_FLAG_FORCE_PCIE = 1
} gdr_pin_flags_t;

#define GDR_API_MAJOR_VERSION 2
#define GDR_API_MINOR_VERSION 5
#define GPU_PAGE_SHIFT 16
#define GPU_PAGE_SIZE (1UL << GPU_PAGE_SHIFT)

gdr_t gdr_open(void);
int gdr_close(gdr_t g);
int gdr_pin_buffer(gdr_t g, unsigned long addr, size_t size, uint64_t p2p_token,
		   uint32_t va_space, gdr_mh_t *handle);
int gdr_pin_buffer_v2(gdr_t g, unsigned long addr, size_t size, uint32_t flags,
		      gdr_mh_t *handle);
int gdr_unpin_buffer(gdr_t g, gdr_mh_t handle);
int gdr_get_info(gdr_t g, gdr_mh_t handle, gdr_info_t *info);
int gdr_get_info_v2(gdr_t g, gdr_mh_t handle, gdr_info_t *info);
int gdr_map(gdr_t g, gdr_mh_t handle, void **va, size_t size);
int gdr_unmap(gdr_t g, gdr_mh_t handle, void *va, size_t size);
int gdr_copy_to_mapping(gdr_mh_t handle, void *map_d_ptr, const void *h_ptr,
			size_t size);
int gdr_copy_from_mapping(gdr_mh_t handle, void *h_ptr, const void *map_d_ptr,
			  size_t size);
void gdr_runtime_get_version(int *major, int *minor);
int gdr_driver_get_version(gdr_t g, int *major, int *minor);
int gdr_get_attribute(gdr_t g, gdr_attr_t attr, int *v);
const char *gdr_get_mapping_type_string(gdr_mapping_type_t type);

int main(void)
{
	/* Use both namespaces in one translation unit. */
	gdr_info_t gi = { 0 };
	struct gdr_reg_info ri = { 0 };

	return (int)gi.va + (int)ri.num_attempts +
	       (gdr_path_str(GDR_PATH_DMABUF)[0] != 'd');
}
