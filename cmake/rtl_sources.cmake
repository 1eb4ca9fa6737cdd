# RTL source lists, in compile order (packages first), read from the subsystems' file lists (rtl/*/*.f).
# The format and its rules are those of scripts/flist.py, which lint and synthesis use.

# tmnic_read_filelist(<var> <file.f>): the flattened paths of a file list as absolute paths: one path per
# line relative to the repository root, `-f <list>` includes another list, '#' and '//' start comments,
# a file reached twice is kept at its first place. CMake re-runs when a list changes.
function(tmnic_read_filelist var f)
  get_filename_component(_root ${TMNIC_RTL_DIR} DIRECTORY)
  set(_out)
  _tmnic_filelist_append(_out ${f} "${_root}")
  list(REMOVE_DUPLICATES _out)
  set(${var} ${_out} PARENT_SCOPE)
endfunction()

function(_tmnic_filelist_append outvar f root)
  if(NOT EXISTS ${f})
    message(FATAL_ERROR "file list ${f} does not exist")
  endif()
  set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${f})
  file(STRINGS ${f} _lines)
  set(_acc ${${outvar}})
  foreach(_l ${_lines})
    string(REGEX REPLACE "(#|//).*" "" _l "${_l}")
    string(STRIP "${_l}" _l)
    if(_l STREQUAL "")
      continue()
    endif()
    if(_l MATCHES "^-f[ \t]+(.+)$")
      _tmnic_filelist_append(_acc ${root}/${CMAKE_MATCH_1} ${root})
    elseif(EXISTS ${root}/${_l})
      list(APPEND _acc ${root}/${_l})
    else()
      message(FATAL_ERROR "${f}: ${_l}: no such file")
    endif()
  endforeach()
  set(${outvar} ${_acc} PARENT_SCOPE)
endfunction()

# The packages (rtl/pkg/pkg.f), the tag-matching engine (rtl/tm/tm_engine.f), the whole NIC (rtl/top/top.f).
tmnic_read_filelist(TMNIC_RTL_PKGS ${TMNIC_RTL_DIR}/pkg/pkg.f)
tmnic_read_filelist(TMNIC_TM_ENGINE_SOURCES ${TMNIC_RTL_DIR}/tm/tm_engine.f)
tmnic_read_filelist(TMNIC_RTL_TOP_SOURCES ${TMNIC_RTL_DIR}/top/top.f)
set(TMNIC_VERILATOR_ARGS -Wall ${TMNIC_RTL_DIR}/lint.vlt -O3 --x-assign fast --x-initial fast
    -CFLAGS -O2 -Wno-fatal)
