# RTL source lists, in compile order (packages first). One list per model that gets Verilated.

# tmnic_read_filelist(<var> <file.f>): the paths listed in a file list (one per line, relative to the
# repository root; blank lines and '#' comments ignored), as absolute paths. The same .f files are
# read by the synthesis flow (syn/synth.py); CMake re-runs when one changes.
function(tmnic_read_filelist var f)
  file(STRINGS ${f} _lines)
  get_filename_component(_root ${TMNIC_RTL_DIR} DIRECTORY)
  set(_out)
  foreach(_l ${_lines})
    string(STRIP "${_l}" _l)
    if(_l STREQUAL "" OR _l MATCHES "^#")
      continue()
    endif()
    list(APPEND _out ${_root}/${_l})
  endforeach()
  set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${f})
  set(${var} ${_out} PARENT_SCOPE)
endfunction()

# The tag-matching engine (rtl/tm/tm_engine.f).
tmnic_read_filelist(TMNIC_TM_ENGINE_SOURCES ${TMNIC_RTL_DIR}/tm/tm_engine.f)
set(TMNIC_RTL_PKGS
  ${TMNIC_RTL_DIR}/pkg/tmnic_hwif_pkg.sv
  ${TMNIC_RTL_DIR}/pkg/tmnic_pkg.sv
  ${TMNIC_RTL_DIR}/pkt/tmnic_crc_pkg.sv
)
file(GLOB TMNIC_RTL_COMMON ${TMNIC_RTL_DIR}/common/*.sv)
set(TMNIC_RTL_TOP_SOURCES
  ${TMNIC_RTL_PKGS}
  ${TMNIC_RTL_COMMON}
  ${TMNIC_RTL_DIR}/pkt/tmnic_pkt_tx.sv
  ${TMNIC_RTL_DIR}/pkt/tmnic_pkt_rx.sv
  ${TMNIC_RTL_DIR}/core/tmnic_axil_regs.sv
  ${TMNIC_RTL_DIR}/core/tmnic_ctx.sv
  ${TMNIC_RTL_DIR}/core/tmnic_dma_rd.sv
  ${TMNIC_RTL_DIR}/core/tmnic_dma_wr.sv
  ${TMNIC_RTL_DIR}/core/tmnic_sq_engine.sv
  ${TMNIC_RTL_DIR}/core/tmnic_rx_engine.sv
  ${TMNIC_RTL_DIR}/core/tmnic_tx_sched.sv
  ${TMNIC_RTL_DIR}/core/tmnic_cq_writer.sv
  ${TMNIC_RTL_DIR}/core/tmnic_lb_demux.sv
  ${TMNIC_RTL_DIR}/core/tmnic_axis_mux2.sv
  ${TMNIC_RTL_DIR}/core/tmnic_stats.sv
  ${TMNIC_RTL_DIR}/core/tmnic_tm_ops.sv
  ${TMNIC_RTL_DIR}/core/tmnic_tm_stats.sv
  ${TMNIC_TM_ENGINE_SOURCES}
  ${TMNIC_RTL_DIR}/top/tmnic_top.sv
)
list(REMOVE_DUPLICATES TMNIC_RTL_TOP_SOURCES)
set(TMNIC_VERILATOR_ARGS -Wall ${TMNIC_RTL_DIR}/lint.vlt -O3 --x-assign fast --x-initial fast
    -CFLAGS -O2 -Wno-fatal)
