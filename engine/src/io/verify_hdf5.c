/* Reading the dataset of a pario HDF5 file for `pario-engine verify`
 * (verify_hdf5.h).  One plain process, no MPI: the file is opened with
 * HDF5's default (POSIX) driver, which a parallel build also has. */
#include "verify_hdf5.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const unsigned char hdf5_signature[8] = {0x89, 'H', 'D', 'F', '\r', '\n', 0x1a, '\n'};

bool verify_hdf5_signature(const unsigned char first[8])
{
    return memcmp(first, hdf5_signature, sizeof hdf5_signature) == 0;
}

#ifdef PARIO_HAVE_PARALLEL_HDF5
#include <hdf5.h>

struct verify_hdf5 {
    hid_t file, dset, space, mem;
    size_t mem_len;
};

verify_hdf5 *verify_hdf5_open(const char *path, uint64_t *length, char *why, size_t whylen)
{
    H5Eset_auto2(H5E_DEFAULT, NULL, NULL); /* one line of ours, not HDF5's error stack */
    verify_hdf5 *h = calloc(1, sizeof *h);
    if (!h) {
        snprintf(why, whylen, "out of memory");
        return NULL;
    }
    h->file = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
    h->dset = h->file < 0 ? -1 : H5Dopen2(h->file, "data", H5P_DEFAULT);
    h->space = h->dset < 0 ? -1 : H5Dget_space(h->dset);
    hid_t type = h->dset < 0 ? -1 : H5Dget_type(h->dset);
    hsize_t dims[1] = {0};
    bool ours = h->space >= 0 && H5Sget_simple_extent_ndims(h->space) == 1 && type >= 0 &&
                H5Tget_size(type) == 1 && H5Tget_class(type) == H5T_INTEGER;
    if (ours)
        H5Sget_simple_extent_dims(h->space, dims, NULL);
    if (type >= 0)
        H5Tclose(type);
    if (!ours) {
        snprintf(why, whylen,
                 h->file < 0 ? "is an HDF5 file that HDF5 cannot open"
                             : "is an HDF5 file without pario's one-byte dataset 'data' "
                               "(not written by pario-engine io --api hdf5)");
        verify_hdf5_close(h);
        return NULL;
    }
    *length = dims[0];
    return h;
}

int verify_hdf5_read(verify_hdf5 *h, unsigned char *buf, size_t len, uint64_t off)
{
    hsize_t start[1] = {off}, count[1] = {len};
    if (h->mem_len != len) {
        if (h->mem > 0)
            H5Sclose(h->mem);
        h->mem = H5Screate_simple(1, count, NULL);
        h->mem_len = len;
    }
    if (H5Sselect_hyperslab(h->space, H5S_SELECT_SET, start, NULL, count, NULL) < 0 ||
        H5Dread(h->dset, H5T_NATIVE_UCHAR, h->mem, h->space, H5P_DEFAULT, buf) < 0) {
        errno = EIO;
        return -1;
    }
    return 0;
}

void verify_hdf5_close(verify_hdf5 *h)
{
    if (!h)
        return;
    if (h->mem > 0)
        H5Sclose(h->mem);
    if (h->space >= 0)
        H5Sclose(h->space);
    if (h->dset >= 0)
        H5Dclose(h->dset);
    if (h->file >= 0)
        H5Fclose(h->file);
    free(h);
}

#else /* an engine built without parallel HDF5 has no hdf5 backend either */

struct verify_hdf5 {
    int unused;
};

verify_hdf5 *verify_hdf5_open(const char *path, uint64_t *length, char *why, size_t whylen)
{
    (void)path;
    (void)length;
    snprintf(why, whylen, "is an HDF5 file, and this engine was built without HDF5: read its "
                          "dataset 'data' with h5py, or rebuild with parallel HDF5");
    return NULL;
}

int verify_hdf5_read(verify_hdf5 *h, unsigned char *buf, size_t len, uint64_t off)
{
    (void)h;
    (void)buf;
    (void)len;
    (void)off;
    errno = ENOTSUP;
    return -1;
}

void verify_hdf5_close(verify_hdf5 *h)
{
    (void)h;
}
#endif
