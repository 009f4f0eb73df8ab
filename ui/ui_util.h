/* util/util.h for the ui files. util.h (at this writing) declares its option
 * parser after its include guard, so a second inclusion in one file fails;
 * other modules' headers may or may not include it already. */
#ifndef SERVETOP_UTIL_UTIL_H
#include "util/util.h"
#endif
