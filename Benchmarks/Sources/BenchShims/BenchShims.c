// Curlew benchmarks — glibc's heap figures (see BenchShims.h).
#include "BenchShims.h"
#include <malloc.h>

size_t bench_heap_in_use(void) {
    struct mallinfo2 info = mallinfo2();
    return info.uordblks + info.hblkhd;
}

void bench_heap_trim(void) {
    malloc_trim(0);
}

size_t bench_heap_free(void) {
    return mallinfo2().fordblks;
}
