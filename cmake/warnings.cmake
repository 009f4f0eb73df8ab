# Warnings are on in every build type; -DWERROR=ON turns them into errors.
include(CheckCCompilerFlag)
set(SERVETOP_WARNINGS "")
foreach(flag -Wall -Wextra -Wshadow -Wpointer-arith -Wcast-align -Wwrite-strings
             -Wstrict-prototypes -Wmissing-prototypes -Wformat=2 -Wundef
             -Wnull-dereference -Wdouble-promotion -Wvla -Wno-unused-parameter
             -Werror=implicit-function-declaration -Werror=incompatible-pointer-types)
  string(MAKE_C_IDENTIFIER "HAVE${flag}" var)
  check_c_compiler_flag(${flag} ${var})
  if(${var})
    list(APPEND SERVETOP_WARNINGS ${flag})
  endif()
endforeach()
if(WERROR)
  list(APPEND SERVETOP_WARNINGS -Werror)
endif()

function(servetop_target_flags target)
  target_compile_options(${target} PRIVATE ${SERVETOP_WARNINGS})
endfunction()
