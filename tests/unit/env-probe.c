/* SPDX-License-Identifier: MIT */
/* Prints how the library read its environment (for test-setuid.sh). */
#include <stdio.h>

#include "internal.h"

int main(void)
{
	const struct gdr_node *nd = gdr_node_get();

	printf("env_error=%s\ndebug=%d\nenv_mask=0x%x\n", nd->env_error,
	       nd->debug, nd->env_mask);
	return 0;
}
