# One object library per layer; `ember` links them all into one shared library.
# ember_layer(NAME DIR DEPS...) globs DIR/*.cpp so adding a file needs no edit here.
function(ember_layer name dir)
  file(GLOB_RECURSE srcs CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/src/${dir}/*.cpp)
  add_library(ember_${name} OBJECT ${srcs})
  target_include_directories(ember_${name} PUBLIC
    $<BUILD_INTERFACE:${CMAKE_SOURCE_DIR}/include>
    PRIVATE ${CMAKE_SOURCE_DIR}/src)
  target_link_libraries(ember_${name} PUBLIC fmt::fmt OpenMP::OpenMP_CXX ${ARGN})
  # Thread-locals (grad mode, allocator caches) are read on every op: the
  # initial-exec model avoids a __tls_get_addr call per access.
  # No semantic interposition: calls inside libember may be inlined (Ember
  # does not support replacing its functions with LD_PRELOAD). No errno from
  # libm, so sqrt/exp loops vectorize.
  target_compile_options(ember_${name} PRIVATE -ftls-model=initial-exec -fno-semantic-interposition
                                               -fno-math-errno)
endfunction()
