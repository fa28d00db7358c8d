#include "fail.h"

#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

static int g_mpi_up = 0;
static int g_rank = 0;

void fail_set_mpi(int rank)
{
    g_mpi_up = 1;
    g_rank = rank;
}

static _Noreturn void finish(int code)
{
    fflush(stdout);
    fflush(stderr);
    if (g_mpi_up)
        MPI_Finalize();
    exit(code);
}

static void print_line(const char *fmt, va_list ap)
{
    fputs("pario-engine: error: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
}

void fail_usage(const char *fmt, ...)
{
    if (g_rank == 0) {
        va_list ap;
        va_start(ap, fmt);
        print_line(fmt, ap);
        va_end(ap);
    }
    finish(EXIT_USAGE);
}

void fail_exit(int code, int print_here, const char *fmt, ...)
{
    if (print_here) {
        va_list ap;
        va_start(ap, fmt);
        print_line(fmt, ap);
        va_end(ap);
    }
    finish(code);
}
