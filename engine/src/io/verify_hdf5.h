/* `pario-engine verify` of a file the hdf5 backend wrote: its one dataset
 * "data" holds the bytes a raw file of the same run would hold (one uint8
 * element per byte), so verify checks the dataset's bytes, not the file's
 * (the file starts with HDF5's own superblock and metadata). */
#ifndef PARIO_VERIFY_HDF5_H
#define PARIO_VERIFY_HDF5_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* HDF5's format signature, at offset 0 of every file the backend makes
 * (it uses no user block). */
bool verify_hdf5_signature(const unsigned char first[8]);

typedef struct verify_hdf5 verify_hdf5;

/* Open `path`'s dataset "data" read-only: NULL with a one-line reason in
 * `why` (not a pario HDF5 file, or an engine built without HDF5). */
verify_hdf5 *verify_hdf5_open(const char *path, uint64_t *length, char *why, size_t whylen);
/* Bytes [off, off+len) of the dataset: 0, or -1 with errno. */
int verify_hdf5_read(verify_hdf5 *h, unsigned char *buf, size_t len, uint64_t off);
void verify_hdf5_close(verify_hdf5 *h);

#endif
