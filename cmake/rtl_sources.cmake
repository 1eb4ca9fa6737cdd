# RTL source lists, in compile order (packages first), read from the subsystems' file lists (rtl/*/*.f)
# by the project's one reader, scripts/flist.py (also used by lint and synthesis).

find_package(Python3 REQUIRED COMPONENTS Interpreter)

# tmnic_read_filelist(<var> <file.f>): the flattened paths of a file list, as absolute paths. CMake
# re-runs when the list or a list it includes changes.
function(tmnic_read_filelist var f)
  get_filename_component(_root ${TMNIC_RTL_DIR} DIRECTORY)
  foreach(_what files lists)
    set(_opt)
    if(_what STREQUAL "lists")
      set(_opt --lists)
    endif()
    execute_process(COMMAND ${Python3_EXECUTABLE} ${_root}/scripts/flist.py ${_opt} ${f}
                    WORKING_DIRECTORY ${_root} OUTPUT_VARIABLE _out ERROR_VARIABLE _err RESULT_VARIABLE _rc
                    OUTPUT_STRIP_TRAILING_WHITESPACE)
    if(NOT _rc EQUAL 0)
      message(FATAL_ERROR "${f}: ${_err}")
    endif()
    string(REPLACE "\n" ";" _rel "${_out}")
    set(_${_what})
    foreach(_p ${_rel})
      list(APPEND _${_what} ${_root}/${_p})
    endforeach()
  endforeach()
  set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${_lists} ${_root}/scripts/flist.py)
  set(${var} ${_files} PARENT_SCOPE)
endfunction()

# The packages (rtl/pkg/pkg.f), the tag-matching engine (rtl/tm/tm_engine.f), the whole NIC (rtl/top/top.f).
tmnic_read_filelist(TMNIC_RTL_PKGS ${TMNIC_RTL_DIR}/pkg/pkg.f)
tmnic_read_filelist(TMNIC_TM_ENGINE_SOURCES ${TMNIC_RTL_DIR}/tm/tm_engine.f)
tmnic_read_filelist(TMNIC_RTL_TOP_SOURCES ${TMNIC_RTL_DIR}/top/top.f)
# -fno-reloop: Verilator 5.006 may declare the loop variable of a rolled-up copy after its first use
# (uncompilable C++ when an assertion samples a wide array, e.g. the context's QP read ports).
set(TMNIC_VERILATOR_ARGS -Wall ${TMNIC_RTL_DIR}/lint.vlt --assert -O3 -fno-reloop --x-assign fast --x-initial fast
    -CFLAGS -O2 -Wno-fatal)
