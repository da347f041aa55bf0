// libFuzzer's driver, which a fuzz target's `main` calls with its test function. SwiftPM names an
// executable's entry point `<Target>_main` and points `main` at it, so libFuzzer's own `main` is not used.
#ifndef CURLEW_FUZZ_DRIVER_H
#define CURLEW_FUZZ_DRIVER_H
#include <stddef.h>
#include <stdint.h>

int LLVMFuzzerRunDriver(int *argc, char ***argv, int (*test)(const uint8_t *data, size_t size));

#endif
