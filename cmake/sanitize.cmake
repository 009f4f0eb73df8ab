# -DSANITIZE=address,undefined  or  -DSANITIZE=thread : one knob for compile and link flags.
if(SANITIZE)
  set(san_flags -fsanitize=${SANITIZE} -fno-omit-frame-pointer -g)
  if(SANITIZE MATCHES "undefined")
    list(APPEND san_flags -fno-sanitize-recover=undefined)
  endif()
  add_compile_options(${san_flags})
  add_link_options(${san_flags})
  message(STATUS "servetop: sanitizers ${SANITIZE}")
endif()

# -DFUZZ=ON: instrument everything for coverage; fuzz targets link libFuzzer's main.
if(FUZZ)
  add_compile_options(-fsanitize=fuzzer-no-link)
endif()
