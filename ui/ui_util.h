/* util/util.h for the ui files. util.h (at this writing) declares its option
 * parser after its include guard, so a second inclusion in one file fails;
 * other modules' headers may or may not include it already. */
#ifndef SERVETOP_UTIL_UTIL_H
#include "util/util.h"
#endif

#ifndef SERVETOP_UI_UI_UTIL_H
#define SERVETOP_UI_UI_UTIL_H
#include "screen.h"

/* A form that cannot go on until the user fixes what it says: the key that
 * would go on (a bit of ui_footer.inactive) drawn dim, why as the error status. */
static inline void ui_footer_blocked(struct ui_footer *out, unsigned key, const char *why) {
  out->inactive |= 1u << key;
  out->status = why;
  out->status_role = THEME_ERROR;
}
#endif
