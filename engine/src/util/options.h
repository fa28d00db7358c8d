/* Command-line values as every subcommand reads them: one wording for the
 * same mistake everywhere (one line on stderr, exit 2, via fail_usage). */
#ifndef PARIO_OPTIONS_H
#define PARIO_OPTIONS_H

#include <stdint.h>

/* A size ("4k", "1m", "2g"; powers of 1024) of at least 1 byte. */
uint64_t option_size(const char *opt, const char *text);

/* A whole number of at least 1. */
uint64_t option_count(const char *opt, const char *text);

#endif
