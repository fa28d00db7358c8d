#include "lock_count.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <unistd.h>

static atomic_uint_fast64_t lock_requests;

typedef int (*fcntl_fn)(int, int, ...);

static fcntl_fn real_fcntl(void)
{
    static _Atomic(fcntl_fn) real;
    fcntl_fn f = atomic_load_explicit(&real, memory_order_acquire);
    if (!f) {
        f = (fcntl_fn)dlsym(RTLD_NEXT, "fcntl");
        atomic_store_explicit(&real, f, memory_order_release);
    }
    return f;
}

static bool is_lock_command(int cmd)
{
    switch (cmd) {
    case F_GETLK:
    case F_SETLK:
    case F_SETLKW:
#ifdef F_OFD_SETLK
    case F_OFD_GETLK:
    case F_OFD_SETLK:
    case F_OFD_SETLKW:
#endif
        return true;
    default:
        return false;
    }
}

/* The C library's fcntl reads its third argument as a pointer-sized value
 * whatever the command; this forwards it the same way. */
int fcntl(int fd, int cmd, ...)
{
    va_list ap;
    va_start(ap, cmd);
    void *arg = va_arg(ap, void *);
    va_end(ap);
    if (is_lock_command(cmd))
        atomic_fetch_add_explicit(&lock_requests, 1, memory_order_relaxed);
    return real_fcntl()(fd, cmd, arg);
}

uint64_t lock_count_now(void)
{
    return atomic_load_explicit(&lock_requests, memory_order_relaxed);
}

bool lock_count_active(void)
{
    /* Resolve fcntl as a run-time-loaded library would; it must be ours. */
    void *seen = dlsym(RTLD_DEFAULT, "fcntl");
    return seen == (void *)fcntl;
}
