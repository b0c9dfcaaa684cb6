/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/* bindgen.h - what vm-spec/build.rs hands to bindgen: the whole ABI. */
#include "abi.h"
