/*
 * A C user of the numba-rs runtime, compiled against include/nrt_external.h into a shared
 * library by tests/c_api.rs, which loads it and hands it NRT_get_api(). It only ever
 * reaches the runtime through the table.
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "nrt_external.h"

/* ---- layout of the header's structs, for the Rust side to compare with its own ---- */

size_t user_layout(size_t *out, size_t n) {
    size_t v[] = {
        sizeof(NRT_api_functions),
        offsetof(NRT_api_functions, allocate),
        offsetof(NRT_api_functions, allocate_external),
        offsetof(NRT_api_functions, manage_memory),
        offsetof(NRT_api_functions, acquire),
        offsetof(NRT_api_functions, release),
        offsetof(NRT_api_functions, get_data),
        sizeof(NRT_ExternalAllocator),
        offsetof(NRT_ExternalAllocator, malloc),
        offsetof(NRT_ExternalAllocator, realloc),
        offsetof(NRT_ExternalAllocator, free),
        offsetof(NRT_ExternalAllocator, opaque_data),
    };
    size_t count = sizeof(v) / sizeof(v[0]);
    for (size_t i = 0; i < n && i < count; i++) {
        out[i] = v[i];
    }
    return count;
}

/* ---- a destructor for manage_memory that counts its calls ---- */

static int dtor_calls = 0;
static void *dtor_last = NULL;

static void counting_dtor(void *data) {
    dtor_calls++;
    dtor_last = data;
    free(data);
}

int user_dtor_calls(void) { return dtor_calls; }
void *user_dtor_last(void) { return dtor_last; }

/* ---- an external allocator that counts its calls ---- */

static int ext_tag = 0x5eed;
static int ext_mallocs = 0;
static int ext_frees = 0;
static void *ext_last_block = NULL;

static void *ext_malloc(size_t size, void *opaque) {
    if (opaque != &ext_tag) return NULL;
    ext_mallocs++;
    ext_last_block = malloc(size);
    return ext_last_block;
}

static void *ext_realloc(void *ptr, size_t size, void *opaque) {
    if (opaque != &ext_tag) return NULL;
    return realloc(ptr, size);
}

static void ext_free(void *ptr, void *opaque) {
    if (opaque != &ext_tag) return;
    if (ptr == ext_last_block) ext_frees++;
    free(ptr);
}

static NRT_ExternalAllocator ext_allocator = {ext_malloc, ext_realloc, ext_free, &ext_tag};

int user_ext_mallocs(void) { return ext_mallocs; }
int user_ext_frees(void) { return ext_frees; }

/* ---- scenarios; each returns 0 or the number of the check that failed ---- */

/* allocate, write the whole block, acquire, release, check it survived, release. */
int user_allocate(const NRT_api_functions *api, size_t nbytes) {
    NRT_MemInfo *mi = api->allocate(nbytes);
    if (mi == NULL) return 1;
    unsigned char *data = api->get_data(mi);
    if (data == NULL) return 2;
    memset(data, 0x5a, nbytes);
    api->acquire(mi);
    api->release(mi);
    /* Still one reference: the memory must still be ours. */
    for (size_t i = 0; i < nbytes; i++) {
        if (data[i] != 0x5a) return 3;
    }
    if (api->get_data(mi) != data) return 4;
    api->release(mi);
    return 0;
}

/* manage_memory over malloc'd memory; the destructor must run only at the last release. */
int user_manage_memory(const NRT_api_functions *api) {
    int before = dtor_calls;
    void *buf = malloc(32);
    if (buf == NULL) return 10;
    NRT_MemInfo *mi = api->manage_memory(buf, counting_dtor);
    if (mi == NULL) return 11;
    if (api->get_data(mi) != buf) return 12;
    api->acquire(mi);
    api->acquire(mi);
    api->release(mi);
    api->release(mi);
    if (dtor_calls != before) return 13;
    api->release(mi);
    if (dtor_calls != before + 1) return 14;
    if (dtor_last != buf) return 15;
    return 0;
}

/* allocate_external: one malloc of the allocator at allocation, one free at release. */
int user_allocate_external(const NRT_api_functions *api, size_t nbytes) {
    int mallocs = ext_mallocs, frees = ext_frees;
    NRT_MemInfo *mi = api->allocate_external(nbytes, &ext_allocator);
    if (mi == NULL) return 20;
    if (ext_mallocs != mallocs + 1) return 21;
    unsigned char *data = api->get_data(mi);
    unsigned char *block = ext_last_block;
    /* The data lies just past the MemInfo header, inside the block the allocator gave. */
    if (data < block || (size_t)(data - block) > 128) return 22;
    memset(data, 0xa5, nbytes);
    api->acquire(mi);
    api->release(mi);
    if (ext_frees != frees) return 23;
    api->release(mi);
    if (ext_frees != frees + 1) return 24;
    return 0;
}

/* Wrap a buffer and hand the only reference to the caller (the Rust test releases it). */
NRT_MemInfo *user_wrap(const NRT_api_functions *api, size_t nbytes) {
    void *buf = malloc(nbytes);
    if (buf == NULL) return NULL;
    memset(buf, 0x11, nbytes);
    NRT_MemInfo *mi = api->manage_memory(buf, counting_dtor);
    if (mi == NULL) free(buf);
    return mi;
}
