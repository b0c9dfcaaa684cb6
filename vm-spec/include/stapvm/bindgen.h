/* bindgen.h - what vm-spec/build.rs hands to bindgen: the whole ABI. */
#include "abi.h"
