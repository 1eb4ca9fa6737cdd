# bench/tm_engine_bench (JSON on stdout, not a test): included from bench/CMakeLists.txt.
# Four Verilated variants of tmnic_tm_engine in one executable (distinct prefixes).
add_executable(tm_engine_bench ${CMAKE_CURRENT_LIST_DIR}/../../bench/tm_engine_bench.cpp)
target_compile_options(tm_engine_bench PRIVATE ${TMNIC_WARN})
foreach(_v "tm64;64;64" "tm256;256;256" "tm1024;1024;1024" "tm1024l64;1024;64")
  list(GET _v 0 _p)
  list(GET _v 1 _n)
  list(GET _v 2 _l)
  verilate(tm_engine_bench
    PREFIX V${_p}
    TOP_MODULE tmnic_tm_engine
    SOURCES ${TMNIC_RTL_DIR}/tm/tmnic_tm_engine.sv
    VERILATOR_ARGS -Wall --x-assign fast --x-initial fast -O3 -GN_ENTRIES=${_n} -GLANES=${_l} -GNUM_SRQ=16
    OPT_SLOW -g0 OPT_FAST -O2 -g0 OPT_GLOBAL -g0)
endforeach()
get_target_property(_inc tm_engine_bench INCLUDE_DIRECTORIES)
foreach(_d ${_inc})
  if(_d MATCHES "verilator")
    target_include_directories(tm_engine_bench SYSTEM PRIVATE ${_d})
  endif()
endforeach()
