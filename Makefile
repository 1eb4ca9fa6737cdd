# Short targets over CMake. Every target first runs scripts/setup.sh, which installs what is missing.
BUILD ?= build
JOBS ?= $(shell nproc)
CMAKE_FLAGS ?=
SETUP = scripts/setup.sh

.PHONY: all setup build run test test-asan test-tsan lint waves bench sim-profile hwif clean

all: build

setup:
	@$(SETUP)

$(BUILD)/build.ninja:
	@$(SETUP)
	cmake -S . -B $(BUILD) -G Ninja $(CMAKE_FLAGS)

build: $(BUILD)/build.ninja
	cmake --build $(BUILD) -j $(JOBS)

# Main job: two simulated NICs exchanging messages through an SRQ shared by several QPs.
run: build
	$(BUILD)/tools/tmnic_run $(RUN_ARGS)

# Everything: generated-interface check, RTL lint, block/top/driver/system tests, then the driver and
# simulation harness again under ASan/UBSan, and the threaded verbs test under ThreadSanitizer.
test: build
	python3 tools/gen_hwif.py --check
	scripts/lint.sh
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS)
	$(MAKE) test-asan
	$(MAKE) test-tsan

# Driver unit tests and top-level NIC tests under ASan/UBSan (separate build tree, only those targets).
ASAN_TARGETS = tmnic_driver_tests test_top_raw test_top_tm test_top_rdma
test-asan:
	@$(SETUP)
	cmake -S . -B build-asan -G Ninja -DTMNIC_SANITIZE=ON $(CMAKE_FLAGS) > /dev/null
	cmake --build build-asan -j $(JOBS) --target $(ASAN_TARGETS)
	cd build-asan && ctest --output-on-failure -j $(JOBS) -R "^(driver\.|TopRaw|TopTm|TopRdma)" -E "verbs_|ibv_devinfo"

# Application threads posting and polling against the world's progress thread, and the UDP fabric's
# reader thread beside it, under TSan (tb/system/test_threads.cpp, test_fabric_unit.cpp; separate
# build tree, only those programs and the drop-in library).
test-tsan:
	@$(SETUP)
	cmake -S . -B build-tsan -G Ninja -DTMNIC_TSAN=ON $(CMAKE_FLAGS) > /dev/null
	cmake --build build-tsan -j $(JOBS) --target tmnic_system_threads tmnic_fabric_unit_tests
	cd build-tsan && TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1" ctest --output-on-failure -j $(JOBS) -R "^system\.(Threads|FabricSocket|FabricWorld)\."

lint:
	@$(SETUP)
	scripts/lint.sh

# Main job with FST waveforms (out/waves_nic<N>.fst) and a pcap of the wire (out/wire.pcap).
waves: build
	mkdir -p out
	TMNIC_WAVES=out/waves_nic TMNIC_PCAP=out/wire.pcap $(BUILD)/tools/tmnic_run --messages 200 $(RUN_ARGS)

# JSON results in out/: RC SEND latency/bandwidth/sim speed (512- and 256-bit NIC), the tag-matching
# engine alone, and tag matching in the whole NIC at 64, 256 and 1024 engine entries.
bench: build
	mkdir -p out
	$(BUILD)/bench/tmnic_bench | tee out/bench.json
	cmake --build $(BUILD) -j $(JOBS) --target tmnic_bench_w256
	$(BUILD)/bench/tmnic_bench_w256 | tee out/bench_w256.json
	cmake --build $(BUILD) -j $(JOBS) --target tm_engine_bench tm_nic_bench_64 tm_nic_bench_256 tm_nic_bench_1024
	$(BUILD)/bench/tm_engine_bench | tee out/tm_engine_bench.json
	for n in 64 256 1024; do $(BUILD)/bench/tm_nic_bench_$$n | tee out/tm_nic_bench_$$n.json; done

sim-profile:
	scripts/sim_profile.sh $(BUILD)/profile

hwif:
	python3 tools/gen_hwif.py

# Yosys synthesis of every block (latch/loop and state-bit checks, ECP5 numbers in syn/report.md) and
# the tb/blocks tests against the synthesised netlists (syn/README.md). Not part of `test`: ~40 min.
.PHONY: synth
synth:
	scripts/synth.sh --check

# Tag-matching engine (syn/README.md, "Tag-matching engine"): synth_ecp5 per variant, synth_ecp5 + nextpnr-ecp5
# on an LFE5UM5G-85F over seeds 1,2,3, synth_xilinx for UltraScale+, and the tb/tm tests on the generic
# netlist; syn/tm_engine_report.json and the results in syn/README.md. Variants are NAME=VALUE[,NAME=VALUE...]
# over the engine's parameters, e.g. `make synth-tm TM_ECP5="N_ENTRIES=1024 N_ENTRIES=4096,N_CLASS=1"`;
# an empty list skips that piece (`make synth-tm TM_PNR= TM_XILINX= TM_NETLIST=`: synth_ecp5 only).
# Not part of `synth` nor `test`.
TM_ECP5 ?= N_ENTRIES=1024 N_ENTRIES=4096
TM_PNR ?= N_ENTRIES=1024
TM_XILINX ?= N_ENTRIES=16384,SEQ_W=58
TM_NETLIST ?= N_ENTRIES=1024
.PHONY: synth-tm
synth-tm:
	scripts/synth.sh --tm $(if $(TM_ECP5),--ecp5 $(TM_ECP5)) $(if $(TM_PNR),--pnr $(TM_PNR)) \
	  $(if $(TM_XILINX),--xilinx $(TM_XILINX)) $(if $(TM_NETLIST),--netlist-test $(TM_NETLIST)) $(TM_ARGS)

clean:
	rm -rf $(BUILD) build-asan build-tsan out
