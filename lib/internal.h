/* SPDX-License-Identifier: MIT */
/*
 * Every layer's header, for the tests that reach inside the library (the
 * library's own files include their layer's header only).
 */
#ifndef GPUDIRECT_INTERNAL_H
#define GPUDIRECT_INTERNAL_H

#include "cache.h"
#include "doctor.h"

#endif /* GPUDIRECT_INTERNAL_H */
