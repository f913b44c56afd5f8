/*
 * nrt_external.h -- the numba-rs runtime (NRT) as seen from C.
 *
 * C code compiled outside numba-rs reaches the runtime through one table of function
 * pointers, NRT_api_functions, laid out as in Numba's header of the same name so that
 * code written against Numba's works unchanged. Get the table from NRT_get_api() (or
 * from whoever loaded your code) and call through it; do not look the functions up by
 * name.
 *
 * A MemInfo is an opaque, reference-counted handle on a block of memory. Every function
 * below that returns one hands the caller one reference; give it back with release().
 * When the last reference goes, the memory's destructor runs and the handle is freed.
 */
#ifndef NUMBA_NRT_EXTERNAL_H_
#define NUMBA_NRT_EXTERNAL_H_

#include <stdlib.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct MemInfo NRT_MemInfo;

/* Gives back memory handed to manage_memory(); called once, with that data pointer. */
typedef void NRT_managed_dtor(void *data);

/* An allocator of your own. Each function receives opaque_data as its last argument.
 * malloc must behave as C99 malloc (including for 0 bytes, and returning memory aligned
 * for any object). The runtime refuses (returns NULL for) an allocator whose malloc or
 * free is NULL. The allocator must stay valid while any MemInfo allocated from it is
 * alive: that MemInfo's block is given back through its free. */
typedef void *(*NRT_external_malloc_func)(size_t size, void *opaque_data);
typedef void *(*NRT_external_realloc_func)(void *ptr, size_t new_size, void *opaque_data);
typedef void (*NRT_external_free_func)(void *ptr, void *opaque_data);

struct ExternalMemAllocator {
    NRT_external_malloc_func malloc;
    NRT_external_realloc_func realloc; /* not used by the runtime yet */
    NRT_external_free_func free;
    void *opaque_data;
};

typedef struct ExternalMemAllocator NRT_ExternalAllocator;

typedef struct {
    /* A new MemInfo owning nbytes of fresh, uninitialised memory; NULL on failure. */
    NRT_MemInfo *(*allocate)(size_t nbytes);

    /* The same, the MemInfo and its memory obtained in one block from *allocator. */
    NRT_MemInfo *(*allocate_external)(size_t nbytes, NRT_ExternalAllocator *allocator);

    /* A new MemInfo over memory you allocated: when its last reference is released,
     * dtor(data) runs (nothing runs when dtor is NULL). NULL on failure. */
    NRT_MemInfo *(*manage_memory)(void *data, NRT_managed_dtor dtor);

    /* Take one more reference. */
    void (*acquire)(NRT_MemInfo *mi);

    /* Give one reference back; the last one destroys the MemInfo. */
    void (*release)(NRT_MemInfo *mi);

    /* The memory a MemInfo manages. */
    void *(*get_data)(NRT_MemInfo *mi);
} NRT_api_functions;

/* The runtime's table (one static instance). Exported by the numba-rs runtime; code
 * loaded privately (dlopen with RTLD_LOCAL, Python extension modules) usually receives
 * the pointer from its host instead of linking to this symbol. */
const NRT_api_functions *NRT_get_api(void);

#ifdef __cplusplus
}
#endif

#endif /* NUMBA_NRT_EXTERNAL_H_ */
