/* SPDX-License-Identifier: MIT */
/*
 * The live driver against the conformance record (tests/conform/): the
 * scenarios run on the real GPU, their questions asked through the table
 * the library loads, and the transcript must equal the record line by
 * line. The unit suite holds the fakes to the same record.
 *
 *   test-gpu-conform RECORD   compare (the gpu suite)
 *   test-gpu-conform print    print the transcript (to make a record)
 *
 * Exits 77 where there is no GPU.
 */
#include <stdlib.h>
#include <string.h>

#include "conform.h"
#include "cutest.h"

int main(int argc, char **argv)
{
	struct gdr_cuda_ops cu;
	struct conf_app app;
	char why[512], *text = NULL;
	size_t len = 0;
	FILE *f;
	int rc;

	if (argc != 2) {
		fprintf(stderr, "usage: %s RECORD|print\n", argv[0]);
		return 2;
	}
	rc = cutest_init(0, why, sizeof(why));
	if (rc) {
		printf("%s: %s\n", rc == 77 ? "SKIP" : "FAIL", why);
		return rc;
	}
	if (gdr_cuda_load(&cu, 0, why, sizeof(why))) {
		printf("FAIL: the library cannot load the driver: %s\n", why);
		return 1;
	}
	if (!cu.cuMemGetAddressRange || !cu.cuMemGetHandleForAddressRange) {
		printf("FAIL: the driver lacks cuMemGetAddressRange or "
		       "cuMemGetHandleForAddressRange\n");
		return 1;
	}
	memset(&app, 0, sizeof(app));
#define APP(n) app.n = ct.n
	APP(cuMemAlloc);
	APP(cuMemFree);
	APP(cuMemAllocHost);
	APP(cuMemFreeHost);
	APP(cuMemAllocManaged);
	APP(cuMemAllocAsync);
	APP(cuMemFreeAsync);
	APP(cuStreamSynchronize);
	APP(cuMemAddressReserve);
	APP(cuMemAddressFree);
	APP(cuMemCreate);
	APP(cuMemRelease);
	APP(cuMemMap);
	APP(cuMemUnmap);
	APP(cuMemSetAccess);
	APP(cuMemGetAllocationGranularity);
#undef APP
	app.primary = ct.primary;
	f = open_memstream(&text, &len);
	if (!f)
		return 1;
	rc = conf_run(&app, &cu, f);
	if (fclose(f))
		return 1;
	if (!strcmp(argv[1], "print")) {
		fputs(text, stdout);
		free(text);
		return rc;
	}
	if (rc) {
		fputs(text, stdout);
		printf("FAIL: a scenario could not run on this GPU\n");
		free(text);
		return 1;
	}
	rc = conf_compare(text, argv[1], "driver");
	printf("%s: the live driver %s the record %s\n", rc ? "FAIL" : "ok",
	       rc ? "differs from" : "answers as", argv[1]);
	printf("%d passed, %d failed\n", !rc, rc);
	free(text);
	return rc;
}
