"""mate: W4A16 GEMM (int4 weights x fp16/bf16 activations) as PyTorch custom ops.

Importing this package loads the native library, which registers:

* ``torch.ops.mate.w4a16_gemm(x, qweight, frame_meta, scales, zeros=None, perm=None, bias=None,
  group_size=-1, num_sms=None, workspace=None) -> Tensor`` and its ``.out`` overload
  (keyword ``out=``), for CPU and CUDA tensors, with Meta kernels for torch.compile;
* ``torch.ops.mate.w4a16_workspace_size(x, frame_meta, num_sms=None) -> int``;
* ``torch.ops.mate.frame_meta(K, N, group_size, has_zeros, has_perm, *, x_cols=None) -> list[int]``;
* ``torch.ops.mate.frame_from_{gptq,awq,compressed,marlin}(...)``: checkpoint tensors -> a frame
  (``mate.frame``: ``from_gptq`` ... return a :class:`Frame` to pass to the GEMM); with
  ``shard="column"|"row", rank=, world=`` from a tensor-parallel rank's slice (``mate.shard``).

Serving pieces (pure Python over the ops): ``W4A16Linear`` (``linear.py``), RTN quantization
(``quantize.py``), an ``MPLinearKernel``-shaped adapter (``adapter.py``), vLLM's Marlin call
surface (``marlin_compat.py``) and the Hugging Face Linear swap (``hf.py``: ``swap_linears``).

A serving process can skip this package and call ``torch.ops.load_library(path)`` itself.
The frame layout is defined in ``src/frame/mod.rs``.
"""

from __future__ import annotations

import os
from pathlib import Path

import torch

__all__ = [
    "library_path", "load", "frame_meta", "Frame", "from_gptq", "from_awq", "from_compressed", "from_marlin",
    "W4A16Linear", "swap_linears",
]

_LIB_NAME = "libmate.so"
_loaded: Path | None = None


def _candidates() -> list[Path]:
    here = Path(__file__).resolve().parent
    found = []
    if os.environ.get("MATE_LIBRARY"):
        found.append(Path(os.environ["MATE_LIBRARY"]))
    found.append(here / _LIB_NAME)
    repo = here.parent.parent
    found += [repo / "target" / "release" / _LIB_NAME, repo / "target" / "debug" / _LIB_NAME]
    return found


def library_path() -> Path:
    """The native library this package loads: $MATE_LIBRARY, then next to the package, then the
    repository's cargo build (release, then debug)."""
    for p in _candidates():
        if p.is_file():
            return p
    looked = "\n  ".join(str(p) for p in _candidates())
    raise FileNotFoundError(
        f"mate: {_LIB_NAME} not found; looked in:\n  {looked}\n"
        "Build it with `cargo build --release` (see README.md) or set MATE_LIBRARY to its path."
    )


def load(path: str | os.PathLike | None = None) -> Path:
    """Loads the native library once (later calls return the loaded path)."""
    global _loaded
    if _loaded is None:
        p = Path(path) if path is not None else library_path()
        if not p.is_file():  # an explicit path (or $MATE_LIBRARY) that is not there: say so, not dlopen's words
            src = "$MATE_LIBRARY" if path is not None and str(path) == os.environ.get("MATE_LIBRARY") else "the path given"
            raise FileNotFoundError(
                f"mate: {_LIB_NAME} not found at {p} ({src}); build it with `cargo build --release` "
                "(see README.md) or point MATE_LIBRARY at a built library"
            )
        torch.ops.load_library(str(p))
        _loaded = p
    return _loaded


def frame_meta(K: int, N: int, group_size: int, has_zeros: bool, has_perm: bool, *, x_cols: int | None = None) -> list[int]:
    """The metadata list of a current-version frame (validated by the library); ``x_cols`` below
    ``K`` describes a shard frame (src/frame/mod.rs, the shard invariant)."""
    return torch.ops.mate.frame_meta(K, N, group_size, has_zeros, has_perm, x_cols=x_cols)


load(os.environ.get("MATE_LIBRARY"))

from . import frame  # noqa: E402
from .frame import Frame, from_awq, from_compressed, from_gptq, from_marlin  # noqa: E402
from . import quantize  # noqa: E402
from .linear import W4A16Linear  # noqa: E402
from .hf import swap_linears  # noqa: E402
from . import adapter, marlin_compat  # noqa: E402
from . import shard  # noqa: E402
