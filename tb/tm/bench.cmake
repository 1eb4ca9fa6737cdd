# bench/tm_engine_bench (JSON on stdout, not a test): included from bench/CMakeLists.txt.
# Verilated variants of tmnic_tm_engine in one executable (distinct prefixes): N_ENTRIES 1024 and
# 16384 in the default geometry.
add_executable(tm_engine_bench ${CMAKE_CURRENT_LIST_DIR}/../../bench/tm_engine_bench.cpp)
target_compile_options(tm_engine_bench PRIVATE ${TMNIC_WARN})
target_link_libraries(tm_engine_bench PRIVATE tmnic_tblib)
target_compile_definitions(tm_engine_bench PRIVATE TMNIC_REPO="${CMAKE_SOURCE_DIR}")
target_include_directories(tm_engine_bench PRIVATE ${CMAKE_CURRENT_LIST_DIR} ${CMAKE_SOURCE_DIR}/include)
foreach(_v "tm1024;1024" "tm16k;16384")
  list(GET _v 0 _p)
  list(GET _v 1 _n)
  verilate(tm_engine_bench
    PREFIX V${_p}
    TOP_MODULE tmnic_tm_engine
    SOURCES ${TMNIC_RTL_DIR}/lint.vlt ${TMNIC_TM_ENGINE_SOURCES}
    VERILATOR_ARGS -Wall --x-assign fast --x-initial fast -O3 -GN_ENTRIES=${_n} -GNUM_SRQ=16
    OPT_SLOW -g0 OPT_FAST -O2 -g0 OPT_GLOBAL -g0)
endforeach()
tmnic_verilator_system_includes(tm_engine_bench)
tmnic_share_verilated_runtime(tm_engine_bench)
tmnic_verilated_unity(tm_engine_bench)
