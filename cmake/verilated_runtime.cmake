# tmnic_share_verilated_runtime(<target>): link the shared Verilator runtime instead of compiling it
# into <target> (call after verilate()).
#
# The Verilator runtime (verilated.cpp, verilated_threads.cpp) does not depend on the model: compile
# it once for every untraced test model instead of once per executable (it was ~830 CPU-seconds, a
# quarter of a clean build, in the 2026-11-25 CI run). A model whose verilate() added other runtime
# files (tracing, coverage) keeps its own.
function(tmnic_share_verilated_runtime exe)
  get_target_property(_trace ${exe} VERILATOR_TRACE)
  get_target_property(_cov ${exe} VERILATOR_COVERAGE)
  if(_trace OR _cov)
    return()
  endif()
  get_target_property(_src ${exe} SOURCES)
  set(_keep)
  set(_rt)
  foreach(_s IN LISTS _src)
    if(_s MATCHES "/include/verilated(_threads)?\\.cpp$")
      list(APPEND _rt ${_s})
    elseif(_s MATCHES "/include/verilated[a-z_]*\\.cpp$")
      return()  # another runtime file: leave this model as verilate() made it
    else()
      list(APPEND _keep ${_s})
    endif()
  endforeach()
  list(LENGTH _rt _n)
  if(NOT _n EQUAL 2)
    return()
  endif()
  set_property(TARGET ${exe} PROPERTY SOURCES ${_keep})
  if(NOT TARGET tmnic_verilated_rt)
    add_library(tmnic_verilated_rt STATIC ${_rt})
    target_include_directories(tmnic_verilated_rt SYSTEM PUBLIC ${VERILATOR_ROOT}/include ${VERILATOR_ROOT}/include/vltstd)
    target_compile_definitions(tmnic_verilated_rt PRIVATE VM_COVERAGE=0 VM_SC=0 VM_TRACE=0 VM_TRACE_VCD=0 VM_TRACE_FST=0)
    target_compile_options(tmnic_verilated_rt PRIVATE -g0)
    target_compile_features(tmnic_verilated_rt PRIVATE cxx_std_17)
    find_package(Threads REQUIRED)
    target_link_libraries(tmnic_verilated_rt PUBLIC Threads::Threads)
  endif()
  target_link_libraries(${exe} PRIVATE tmnic_verilated_rt)
endfunction()
