// Curlew benchmarks — glibc's heap figures, which the Glibc module does not bring in (<malloc.h>).
#pragma once
#include <stddef.h>

/// Bytes malloc has handed out and not had back (in-use chunks plus mapped blocks), over every arena.
size_t bench_heap_in_use(void);

/// Bytes free inside malloc's arenas: kept by the allocator, counted in the resident size, in no use.
size_t bench_heap_free(void);

/// Returns the free memory malloc can to the system (`malloc_trim(0)`).
void bench_heap_trim(void);
