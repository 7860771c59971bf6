# cmake -P script run by the install.find_package_consumer_and_cli test; the
# variables come from tests/install/CMakeLists.txt.
cmake_minimum_required(VERSION 3.22)

function(run what)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "install test: ${what} failed (${rc}):\n${out}")
  endif()
  set(out "${out}" PARENT_SCOPE)
endfunction()

file(REMOVE_RECURSE "${WORK_DIR}")
set(prefix "${WORK_DIR}/prefix")
run("cmake --install" ${CMAKE_COMMAND} --install "${EMBER_BUILD_DIR}" --prefix "${prefix}")

# The installed binary finds libember through an RPATH relative to itself.
set(ember_bin "${prefix}/${BINDIR}/ember")
file(READ_ELF "${ember_bin}" RUNPATH runpath RPATH rpath)
if(NOT "${runpath}${rpath}" MATCHES "^\\$ORIGIN")
  message(FATAL_ERROR "install test: ${ember_bin} has RUNPATH '${runpath}' RPATH '${rpath}', "
                      "expected one relative to $ORIGIN")
endif()
run("env -i ${ember_bin} --help" env -i "${ember_bin}" --help)
if(NOT out MATCHES "train")
  message(FATAL_ERROR "install test: ember --help printed no 'train':\n${out}")
endif()

# A consumer configures with none of the private dependencies findable.
set(configure ${CMAKE_COMMAND} -S "${CONSUMER_DIR}" -B "${WORK_DIR}/consumer" -G "${GENERATOR}"
  -DCMAKE_CXX_COMPILER=${CXX} -DCMAKE_BUILD_TYPE=Release
  "-Dember_DIR=${prefix}/${LIBDIR}/cmake/ember"
  -DCMAKE_DISABLE_FIND_PACKAGE_hwy=ON -DCMAKE_DISABLE_FIND_PACKAGE_dnnl=ON
  -DCMAKE_DISABLE_FIND_PACKAGE_OpenMP=ON -DCMAKE_DISABLE_FIND_PACKAGE_ZLIB=ON
  -DCMAKE_DISABLE_FIND_PACKAGE_yaml-cpp=ON -DCMAKE_DISABLE_FIND_PACKAGE_nlohmann_json=ON)
if(CCACHE)
  # Hashed relative to Ember's source dir, like Ember's own objects.
  set(ENV{CCACHE_BASEDIR} "${EMBER_SOURCE_DIR}")
  list(APPEND configure "-DCMAKE_CXX_COMPILER_LAUNCHER=${CCACHE}")
endif()
run("configuring the consumer" ${configure})
run("building the consumer" ${CMAKE_COMMAND} --build "${WORK_DIR}/consumer")
set(model "${WORK_DIR}/tiny.ember")
run("running the consumer" env -i "${WORK_DIR}/consumer/consumer" "${model}")
if(NOT out MATCHES "consumer ok")
  message(FATAL_ERROR "install test: the consumer printed:\n${out}")
endif()
message(STATUS "install test: ${out}")
# find_package(ember COMPONENTS runtime): ember::runtime alone runs the model.
run("running the runtime consumer" env -i "${WORK_DIR}/consumer/consumer_runtime" "${model}")
if(NOT out MATCHES "consumer_runtime ok")
  message(FATAL_ERROR "install test: the runtime consumer printed:\n${out}")
endif()
message(STATUS "install test: ${out}")
# ember::cli: the installed command line, called from the consumer's main.
run("running the CLI consumer" env -i "${WORK_DIR}/consumer/consumer_cli" --version)
if(NOT out MATCHES "ember [0-9]")
  message(FATAL_ERROR "install test: consumer_cli --version printed:\n${out}")
endif()
message(STATUS "install test: consumer_cli: ${out}")
