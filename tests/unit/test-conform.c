/* SPDX-License-Identifier: MIT */
/*
 * The unit fakes against the record the live driver made on the GPU
 * machine (tests/conform/record-h200.txt): the conformance scenarios run
 * on the fake driver, configured as that node (an x86 PCIe H200, which
 * refuses the PCIe-mapped export), must print the record exactly. A fake
 * that answers a question differently from the driver fails here.
 */
#include <stdlib.h>

#include "check.h"
#include "conform.h"
#include "fakes.h"

int main(int argc, char **argv)
{
	struct gdr_cuda_ops cu;
	struct conf_app app;
	struct fixture fx;
	char why[256], *text = NULL;
	size_t len = 0;
	FILE *f;
	int rc;

	if (argc != 2 || fixture_make(&fx)) {
		fprintf(stderr, "usage: %s RECORD\n", argv[0]);
		return 2;
	}
	fakes_reset();
	fake_model.gpu[0].pcie_mapping = CUDA_ERROR_NOT_SUPPORTED;
	fakes_install(&fx, NULL, NULL, NULL);
	check_scope = "the fake driver answers as the record";
	CHECK_INT(gdr_seam()->cuda_load(&cu, 0, why, sizeof(why)), 0);
	fake_conf_app(&app);
	fake_current = app.primary; /* the application's current context */
	f = open_memstream(&text, &len);
	CHECK(f != NULL);
	if (!f)
		return 1;
	rc = conf_run(&app, &cu, f);
	CHECK(fclose(f) == 0);
	CHECK_INT(rc, 0);
	CHECK_INT(conf_compare(text, argv[1], "fake"), 0);
	if (check_failed || getenv("CONFORM_PRINT"))
		fprintf(stderr, "the fakes' transcript:\n%s", text);
	free(text);
	fixture_remove(&fx);
	return check_summary("conform");
}
