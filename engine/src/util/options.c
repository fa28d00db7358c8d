#include "options.h"

#include "fail.h"
#include "sizes.h"

uint64_t option_size(const char *opt, const char *text)
{
    uint64_t v;
    const char *why;
    if (size_parse(text, &v, &why) != 0)
        fail_usage("%s '%s' %s: give a size such as 4k, 1m or 2g", opt, text, why);
    return v;
}

uint64_t option_count(const char *opt, const char *text)
{
    uint64_t v;
    const char *why;
    if (count_parse(text, &v, &why) != 0)
        fail_usage("%s '%s' %s: give a whole number of at least 1", opt, text, why);
    return v;
}
