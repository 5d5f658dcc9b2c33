"""The raw path: mate's C ABI entry ``mate_gemm_raw`` (src/raw.rs) through ctypes, without the
torch dispatcher. For microbenchmarks of host cost and device time, and for hosts that hold plain
pointers. It runs the same validation, planning and kernels as ``torch.ops.mate.w4a16_gemm.out``.

    call = RawCall(x, frame, out, bias=None, workspace=None)   # descriptors built once
    call()                                                       # one launch on the current stream

The descriptors capture the tensors' addresses: rebuild the ``RawCall`` if a tensor changes.
"""

from __future__ import annotations

import ctypes

import torch

from . import load

MAX_DIMS = 8


class TensorDesc(ctypes.Structure):  # src/ffi.rs bridge::TensorDesc (#[repr(C)])
    _fields_ = [("present", ctypes.c_bool), ("data", ctypes.c_size_t), ("dtype", ctypes.c_int32),
                ("device_type", ctypes.c_int32), ("device_index", ctypes.c_int32), ("ndim", ctypes.c_int32),
                ("sizes", ctypes.c_int64 * MAX_DIMS), ("strides", ctypes.c_int64 * MAX_DIMS)]


class GemmCall(ctypes.Structure):  # src/ffi.rs bridge::GemmCall
    _fields_ = [("x", TensorDesc), ("qweight", TensorDesc), ("scales", TensorDesc), ("zeros", TensorDesc),
                ("perm", TensorDesc), ("bias", TensorDesc), ("workspace", TensorDesc), ("out", TensorDesc),
                ("group_size", ctypes.c_int64), ("has_num_sms", ctypes.c_bool), ("num_sms", ctypes.c_int64),
                ("stream", ctypes.c_size_t)]


# c10::ScalarType and c10::DeviceType codes (src/tensor.rs reads the same numbers)
_DTYPE = {torch.uint8: 0, torch.int32: 3, torch.int64: 4, torch.float16: 5, torch.float32: 6, torch.bfloat16: 15}
_DEVICE = {"cpu": 0, "cuda": 1}


def describe(t: torch.Tensor | None) -> TensorDesc:
    d = TensorDesc()
    if t is None:
        return d
    if t.dim() > MAX_DIMS:
        raise ValueError(f"mate.raw: a tensor of {t.dim()} dims: at most {MAX_DIMS} are supported")
    d.present = True
    d.data = t.data_ptr()
    d.dtype = _DTYPE.get(t.dtype, -1)
    d.device_type = _DEVICE.get(t.device.type, -1)
    d.device_index = t.device.index if t.device.index is not None else -1
    d.ndim = t.dim()
    for i in range(t.dim()):
        d.sizes[i] = t.size(i)
        d.strides[i] = t.stride(i)
    return d


_fn = None


def _entry():
    global _fn
    if _fn is None:
        lib = ctypes.CDLL(str(load()))
        f = lib.mate_gemm_raw
        f.argtypes = [ctypes.POINTER(GemmCall), ctypes.POINTER(ctypes.c_int64), ctypes.c_size_t, ctypes.c_char_p,
                      ctypes.c_size_t]
        f.restype = ctypes.c_int64
        _fn = f
    return _fn


class RawCall:
    """One prepared call of the raw entry: ``frame`` is a :class:`mate.Frame` (or any object with
    qweight, meta, scales, zeros, perm, group_size). ``stream=None`` launches on torch's current
    stream at each call (so CUDA graph capture works)."""

    def __init__(self, x, frame, out, *, bias=None, workspace=None, num_sms=None, stream=None):
        self.tensors = (x, frame.qweight, frame.scales, frame.zeros, frame.perm, bias, workspace, out)  # keep alive
        c = GemmCall()
        c.x, c.qweight, c.scales = describe(x), describe(frame.qweight), describe(frame.scales)
        c.zeros, c.perm, c.bias = describe(frame.zeros), describe(frame.perm), describe(bias)
        c.workspace, c.out = describe(workspace), describe(out)
        c.group_size = frame.group_size
        c.has_num_sms, c.num_sms = num_sms is not None, num_sms or 0
        self.call = c
        self.meta = (ctypes.c_int64 * len(frame.meta))(*frame.meta)
        self.cuda = x.is_cuda
        self.fixed_stream = stream
        self.err = ctypes.create_string_buffer(1024)
        self.fn = _entry()

    def __call__(self) -> int:
        """Runs the call; returns 0, or the zeroed workspace bytes it needs when none was given."""
        if self.cuda:
            self.call.stream = self.fixed_stream if self.fixed_stream is not None else torch.cuda.current_stream().cuda_stream
        rc = self.fn(ctypes.byref(self.call), self.meta, len(self.meta), self.err, len(self.err))
        if rc < 0:
            raise ValueError(self.err.value.decode())
        return rc
