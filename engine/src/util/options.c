#include "options.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check_mode.h"
#include "fail.h"
#include "out_path.h"
#include "sizes.h"

#define HELP_ID 999 /* below FIRST_CODE, above any letter */
#define FIRST_CODE 1000 /* getopt_long's code of options[i] is FIRST_CODE + i */

#define HELP_INDENT 23 /* "  " + a 20-column left column + " " */
#define HELP_WIDTH 80  /* every --help line fits a terminal of 80 columns */

/* The help text from p up to the end of its line ('\n' or the end),
 * word-wrapped to the columns right of the left one: every command's
 * help wraps alike, whatever length its strings were written at. */
static const char *print_help_line(const char *p)
{
    const int room = HELP_WIDTH - HELP_INDENT;
    int col = 0;
    while (*p && *p != '\n') {
        while (*p == ' ')
            p++;
        int n = 0;
        while (p[n] && p[n] != ' ' && p[n] != '\n')
            n++;
        if (!n)
            break;
        if (col && col + 1 + n > room) { /* a word longer than the room stays whole */
            printf("\n%*s", HELP_INDENT, "");
            col = 0;
        }
        printf("%s%.*s", col ? " " : "", n, p);
        col += (col ? 1 : 0) + n;
        p += n;
    }
    return p;
}

/* The left column (the option and its value) and the help beside it. */
static void print_row(const char *left, const char *help)
{
    if (strlen(left) > 20)
        printf("  %s\n%*s", left, HELP_INDENT, ""); /* too long for the column: help below */
    else
        printf("  %-20s ", left);
    for (const char *p = help;;) {
        p = print_help_line(p);
        if (*p != '\n')
            break;
        p++;
        printf("\n%*s", HELP_INDENT, "");
    }
    putchar('\n');
}

void option_print(const char *name, const char *arg, const char *help)
{
    char left[80];
    snprintf(left, sizeof left, "--%s%s%s", name, arg ? " " : "", arg ? arg : "");
    print_row(left, help);
}

static void usage(const command_spec *cmd)
{
    printf("%s\n", cmd->synopsis);
    for (size_t i = 0; i < cmd->noptions; i++) {
        const option_spec *o = &cmd->options[i];
        char left[80];
        int k = o->letter ? snprintf(left, sizeof left, "-%c, ", o->letter) : 0;
        snprintf(left + k, sizeof left - (size_t)k, "--%s%s%s", o->name, o->arg ? " " : "",
                 o->arg ? o->arg : "");
        print_row(left, o->help);
    }
    option_print("help", NULL, "this text");
    if (cmd->epilogue)
        printf("\n%s\n", cmd->epilogue);
}

void option_given(bool *seen, const char *shown, bool valued, bool repeatable, const char *cmd)
{
    if (valued && !repeatable && *seen)
        fail_usage("%s is given twice: give it once (pario-engine %s would take only the last)",
                   shown, cmd);
    *seen = true;
}

int options_parse(const command_spec *cmd, int argc, char **argv, int rank, option_setter set,
                   void *ctx)
{
    const size_t n = cmd->noptions;
    struct option *longopts = calloc(n + 2, sizeof *longopts);
    char *shorts = calloc(2 * n + 2, 1);
    bool *seen = calloc(n + 1, sizeof *seen);
    if (!longopts || !shorts || !seen)
        fail_usage("out of memory parsing the options");
    size_t ns = 0;
    shorts[ns++] = ':'; /* a missing value is ':', not '?' */
    for (size_t i = 0; i < n; i++) {
        const option_spec *o = &cmd->options[i];
        longopts[i] = (struct option){o->name, o->arg ? required_argument : no_argument, 0,
                                      (int)(FIRST_CODE + i)};
        if (o->letter) {
            shorts[ns++] = o->letter;
            if (o->arg)
                shorts[ns++] = ':';
        }
    }
    longopts[n] = (struct option){"help", no_argument, 0, HELP_ID};

    opterr = 0;
    optind = 1;
    int c, which = 0;
    while ((c = getopt_long(argc, argv, shorts, longopts, &which)) != -1) {
        if (c == HELP_ID) {
            free(longopts);
            free(shorts);
            free(seen);
            if (rank == 0)
                usage(cmd);
            fail_exit(0, 0, "%s", "");
        }
        if (c == ':') {
            if (optopt >= FIRST_CODE || optopt == 0)
                fail_usage("%s needs a value: see pario-engine %s --help", argv[optind - 1], cmd->name);
            fail_usage("-%c needs a value: see pario-engine %s --help", optopt, cmd->name);
        }
        const option_spec *o = NULL;
        char shown[80];
        if (c >= FIRST_CODE && (size_t)(c - FIRST_CODE) < n) {
            o = &cmd->options[c - FIRST_CODE];
            snprintf(shown, sizeof shown, "--%s", o->name);
        } else {
            for (size_t i = 0; i < n && c != '?'; i++)
                if (cmd->options[i].letter == c)
                    o = &cmd->options[i];
            if (!o) {
                if (optopt > 0 && optopt < FIRST_CODE)
                    fail_usage("unknown option '-%c': see pario-engine %s --help", optopt, cmd->name);
                fail_usage("unknown option '%s': see pario-engine %s --help", argv[optind - 1],
                           cmd->name);
            }
            snprintf(shown, sizeof shown, "-%c", o->letter);
        }
        /* "--size --json f": the next option is not a value */
        if (optarg && optarg[0] == '-' && optarg[1] == '-')
            fail_usage("%s needs a value: see pario-engine %s --help", shown, cmd->name);
        option_given(&seen[o - cmd->options], shown, o->arg != NULL, false, cmd->name);
        set(ctx, o->id, shown, optarg);
    }
    free(seen);
    free(longopts);
    free(shorts);
    if (argc - optind > cmd->operands)
        fail_usage("unexpected argument '%s': options start with --, see pario-engine %s --help",
                   argv[optind + cmd->operands], cmd->name);
    return optind;
}

/* text through parse (size_parse or count_parse), or the line naming why
 * and what to give instead. */
static uint64_t parsed(const char *opt, const char *text,
                       int (*parse)(const char *, uint64_t *, const char **), const char *instead)
{
    uint64_t v;
    const char *why;
    if (parse(text, &v, &why) != 0)
        fail_usage("%s '%s' %s: give %s", opt, text, why, instead);
    return v;
}

uint64_t option_size(const char *opt, const char *text)
{
    return parsed(opt, text, size_parse, "a size such as 4k, 1m or 2g");
}

uint64_t option_size_in(const char *opt, const char *text, uint64_t lo, uint64_t hi)
{
    uint64_t v = option_size(opt, text);
    if (v < lo || v > hi) {
        char a[32], b[32];
        size_format(lo, a, sizeof a);
        size_format(hi, b, sizeof b);
        fail_usage("%s '%s' is outside %s to %s: give a size in that range", opt, text, a, b);
    }
    return v;
}

uint64_t option_count(const char *opt, const char *text)
{
    return parsed(opt, text, count_parse, "a whole number of at least 1");
}

long option_whole(const char *opt, const char *text, long lo, long hi)
{
    uint64_t v;
    const char *why;
    if (count_parse(text, &v, &why) != 0 || v < (uint64_t)lo || v > (uint64_t)hi)
        fail_usage("%s '%s' must be a whole number from %ld to %ld", opt, text, lo, hi);
    return (long)v;
}

int option_choice(const char *opt, const char *text, const char *const *names)
{
    char list[256] = "";
    int n = 0;
    while (names[n]) {
        if (strcmp(text, names[n]) == 0)
            return n;
        n++;
    }
    for (int i = 0; i < n; i++) {
        size_t used = strlen(list);
        snprintf(list + used, sizeof list - used, "%s%s", i == 0 ? "" : i == n - 1 ? " or " : ", ",
                 names[i]);
    }
    fail_usage("%s '%s' is unknown: use %s", opt, text, list);
}

void option_path(const char *opt, const char *text, char *out, size_t len)
{
    if (!text[0])
        fail_usage("%s needs a path", opt);
    if (strlen(text) >= len)
        fail_usage("%s is longer than %zu characters: use a shorter path", opt, len - 1);
    memcpy(out, text, strlen(text) + 1);
}

void option_file_name(const char *opt, const char *text, char *out, size_t len)
{
    if (!text[0] || strchr(text, '/') || strlen(text) > 200 || strcmp(text, ".") == 0 ||
        strcmp(text, "..") == 0)
        fail_usage("%s '%s' must be a plain file name (no '/'), at most 200 characters", opt, text);
    option_path(opt, text, out, len);
}

const char *option_output(const char *opt, const char *text)
{
    if (!check_mode()) /* the machine's part: checked when the run starts */
        check_output_file(opt, text);
    return text;
}
