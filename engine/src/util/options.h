/* Command lines as every subcommand reads them: one table of options per
 * command, one parsing loop, and one wording for the same mistake in every
 * command (one line on stderr, exit 2, via fail_usage):
 *
 *   unknown option '--frob': see pario-engine K --help
 *   --size needs a value: see pario-engine K --help
 *   unexpected argument 'x': options start with --, see pario-engine K --help
 *   --grid 'x' must be a whole number from 3 to 100000
 *   --chunk '100' is outside 256 B to 64 MiB: give a size in that range
 *   --cb 'x' is unknown: use enable, disable or automatic
 *
 * --help is every command's: its usage, built from the same table, on
 * stdout (rank 0), exit 0. */
#ifndef PARIO_OPTIONS_H
#define PARIO_OPTIONS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* One option: --name [VALUE] (and -letter when given), its help, and the
 * id the command's setter switches on. */
typedef struct option_spec {
    const char *name;   /* without the leading "--" */
    char letter;        /* also -letter (beff's -T), or 0 */
    const char *arg;    /* the value's placeholder in --help ("N", "SIZE"); NULL: a flag */
    const char *help;   /* '\n' starts a continuation line */
    int id;
} option_spec;

typedef struct command_spec {
    const char *name;     /* "laplace": named in every message */
    const char *synopsis; /* --help's text before the options */
    const char *epilogue; /* after them, or NULL */
    const option_spec *options;
    size_t noptions;
    int operands; /* arguments besides the options it takes at most (verify-laplace's FILE) */
} command_spec;

/* A command_spec over a table of option_spec rows. */
#define COMMAND_SPEC(name, synopsis, epilogue, table) \
    {name, synopsis, epilogue, table, sizeof table / sizeof table[0], 0}

/* The rows every kernel has, in one wording. */
#define OPTION_JSON_ROW(id) {"json", 0, "FILE", "write the result document (pario.result/1)", id}
#define OPTION_KEEP_ROW(what, id) {"keep", 0, NULL, "keep " what " (default: removed)", id}
/* --name: the base of the kernel's file names (run_files.h); read it with
 * option_file_name into a char[RUN_NAME_MAX]. */
#define OPTION_NAME_ROW(prefix, id) \
    {"name", 0, "NAME", "base of the file names in DIR (default: a unique\n" prefix ".* name)", id}

/* Called once per option, in command-line order: opt as the user wrote it
 * ("--grid", "-T"), value NULL for a flag. */
typedef void (*option_setter)(void *ctx, int id, const char *opt, const char *value);

/* argv[0] is the command's name.  Every rank parses the same line, so every
 * rank fails alike; only rank 0 prints.  Returns the index in argv of the
 * first operand (argc when none): getopt moves them behind the options. */
int options_parse(const command_spec *cmd, int argc, char **argv, int rank, option_setter set,
                   void *ctx);

/* One option's --help line(s), in the column every command uses. */
void option_print(const char *name, const char *arg, const char *help);

/* Every table-driven parser calls this for each option it meets, with
 * the option's own `seen` flag: a valued option given twice would run
 * with the last value silently, so it is refused by name unless it
 * repeats by design (a backend's --hint, backend_ops.repeatable; no
 * kernel's option_spec row repeats). */
void option_given(bool *seen, const char *shown, bool valued, bool repeatable, const char *cmd);

/* Values.  Each returns the value or fails with its one line. */
/* A size ("4k", "1m", "2g"; powers of 1024) of at least 1 byte. */
uint64_t option_size(const char *opt, const char *text);
/* ... from lo to hi bytes. */
uint64_t option_size_in(const char *opt, const char *text, uint64_t lo, uint64_t hi);
/* A whole number of at least 1. */
uint64_t option_count(const char *opt, const char *text);
/* ... from lo (at least 1) to hi. */
long option_whole(const char *opt, const char *text, long lo, long hi);
/* One of a NULL-terminated list of names: its index. */
int option_choice(const char *opt, const char *text, const char *const *names);
/* A path into a buffer of len bytes (refused when longer or empty). */
void option_path(const char *opt, const char *text, char *out, size_t len);
/* A plain file name (no '/', not . or .., at most 200 characters). */
void option_file_name(const char *opt, const char *text, char *out, size_t len);
/* A result file (--json): checked now, so a run never measures for
 * minutes and then finds it cannot say what it measured (out_path.h). */
const char *option_output(const char *opt, const char *text);

#endif
