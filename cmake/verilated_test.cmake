# One GoogleTest executable around one Verilated model, shared by tb/pkt, tb/blocks and tb/tm; it
# sees the testbench library (tb/lib) as "lib/<header>.hpp".
#
# tmnic_verilated_test(<exe> SRC <test.cpp...> TOP <module> SV <sv files...>
#                      [ARGS <verilator args...>] [DEFS <compile definitions...>] [LIBS <libraries...>]
#                      [INCS <include dirs...>] [LABELS <labels...>] [TEST_PREFIX <prefix>])
#
# The model is built with -Wall, assertions on and X handling as in the NIC build (rtl/lint.vlt
# waivers first); generated code without debug info. TMNIC_WARN applies to the hand-written C++
# only: Verilator's headers are included as system headers.
include(${CMAKE_CURRENT_LIST_DIR}/verilator_system_includes.cmake)
include(${CMAKE_CURRENT_LIST_DIR}/verilated_runtime.cmake)

function(tmnic_verilated_test exe)
  cmake_parse_arguments(T "" "TOP;TEST_PREFIX" "SRC;SV;ARGS;DEFS;LIBS;INCS;LABELS" ${ARGN})
  add_executable(${exe} ${T_SRC})
  target_link_libraries(${exe} PRIVATE ${T_LIBS} tmnic_tblib GTest::gtest_main)
  target_include_directories(${exe} PRIVATE ${CMAKE_CURRENT_SOURCE_DIR} ${T_INCS})
  target_compile_definitions(${exe} PRIVATE ${T_DEFS})
  if(DEFINED TMNIC_WARN)
    target_compile_options(${exe} PRIVATE $<$<COMPILE_LANGUAGE:CXX>:${TMNIC_WARN}>)
  endif()
  set(_sv ${T_SV})
  if(EXISTS ${TMNIC_RTL_DIR}/lint.vlt)
    list(PREPEND _sv ${TMNIC_RTL_DIR}/lint.vlt)
  endif()
  verilate(${exe}
    PREFIX V${T_TOP}
    TOP_MODULE ${T_TOP}
    SOURCES ${_sv}
    VERILATOR_ARGS -Wall --assert --x-assign fast --x-initial fast -O3 ${T_ARGS}
    OPT_SLOW -g0 OPT_FAST -O2 -g0 OPT_GLOBAL -g0)
  tmnic_verilator_system_includes(${exe})
  tmnic_share_verilated_runtime(${exe})
  tmnic_verilated_unity(${exe})
  if(DEFINED T_TEST_PREFIX)
    gtest_discover_tests(${exe} TEST_PREFIX "${T_TEST_PREFIX}" DISCOVERY_TIMEOUT 60 PROPERTIES LABELS "${T_LABELS}")
  else()
    gtest_discover_tests(${exe} DISCOVERY_TIMEOUT 60 PROPERTIES LABELS "${T_LABELS}")
  endif()
endfunction()
