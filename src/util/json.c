/* Small cJSON helpers for members that may be unknown (null). */
#include "util/util.h"

#include <cjson/cJSON.h>
#include <math.h>

void json_add_string_or_null(cJSON *o, const char *key, const char *s) {
  if (s)
    cJSON_AddStringToObject(o, key, s);
  else
    cJSON_AddNullToObject(o, key);
}

void json_add_text_or_null(cJSON *o, const char *key, const char *s) {
  json_add_string_or_null(o, key, s && *s ? s : NULL);
}

void json_add_number_or_null(cJSON *o, const char *key, bool valid, double v) {
  if (valid && isfinite(v))
    cJSON_AddNumberToObject(o, key, v);
  else
    cJSON_AddNullToObject(o, key);
}
