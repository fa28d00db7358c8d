#include <math.h>
#include <string.h>

#include "check.h"
#include "util/json.h"

int main(void)
{
    json j;
    json_init(&j, false);
    json_object_begin(&j, NULL);
    json_string(&j, "s", "a\"b\\c\nd\x01");
    json_double(&j, "nan", NAN);
    json_double(&j, "x", 1.5);
    json_int(&j, "i", -3);
    json_uint(&j, "u", 18446744073709551615ULL);
    json_bool(&j, "t", true);
    json_null(&j, "n");
    json_array_begin(&j, "a");
    json_int(&j, NULL, 1);
    json_array_begin(&j, NULL);
    json_array_end(&j);
    json_object_begin(&j, NULL);
    json_object_end(&j);
    json_array_end(&j);
    json_string(&j, "null_string", NULL);
    json_object_end(&j);
    const char *want = "{\"s\":\"a\\\"b\\\\c\\nd\\u0001\",\"nan\":null,\"x\":1.5,\"i\":-3,"
                       "\"u\":18446744073709551615,\"t\":true,\"n\":null,\"a\":[1,[],{}],"
                       "\"null_string\":null}";
    CHECK(strcmp(json_text(&j), want) == 0);
    if (strcmp(json_text(&j), want) != 0)
        printf("got  %s\nwant %s\n", json_text(&j), want);
    json_free(&j);
    CHECK_DONE();
}
