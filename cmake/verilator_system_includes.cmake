# tmnic_verilator_system_includes(<target>): the Verilator include directories that verilate() added
# to <target> become SYSTEM includes, so that our warning flags (-Werror) do not apply to
# Verilator's own headers.
function(tmnic_verilator_system_includes target)
  get_target_property(_inc ${target} INCLUDE_DIRECTORIES)
  foreach(_d ${_inc})
    if(_d MATCHES "verilator")
      target_include_directories(${target} SYSTEM PRIVATE ${_d})
    endif()
  endforeach()
endfunction()
