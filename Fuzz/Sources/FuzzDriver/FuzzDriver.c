// The declaration's module (see include/FuzzDriver.h); libFuzzer provides the definition.
#include "FuzzDriver.h"
