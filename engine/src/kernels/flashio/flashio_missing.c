/* `pario-engine flashio` in an engine built without parallel HDF5. */
#include "../../util/fail.h"

int flashio_command(int argc, char **argv)
{
    fail_usage("flashio needs parallel HDF5 and this engine was built without it: install "
               "libhdf5-openmpi-dev and run make build");
}
