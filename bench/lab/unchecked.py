"""Lab: bench/decode.py with the mate arms' float64 check recorded but not enforced, for lab builds
that compute wrong results on purpose to time what a part of the kernel costs (for example
MATE_KERNEL_FLAGS=-DMATE_BWG_LAB_NODEQ: the wgmma operand without its dequantization). Each
row's check keeps its real verdict under "ok_real"; never use it for a claim about correctness.

    python3 bench/lab/unchecked.py --library target/X/libmate.so --arms mate ... (decode.py's flags)
"""

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))


def main():
    import os

    if "--library" in sys.argv:  # decode.main sets it too, but the arms module loads the library on import
        os.environ["MATE_LIBRARY"] = sys.argv[sys.argv.index("--library") + 1]
    from bench import decode  # (first: it puts tests/python and torch_ops on the path)
    from bench import arms

    real = arms.Mate.check

    def recorded(self, x):
        chk = real(self, x)
        chk["ok_real"], chk["ok"], chk["enforced"] = chk["ok"], True, False
        return chk

    arms.Mate.check = recorded
    return decode.main(sys.argv[1:])


if __name__ == "__main__":
    sys.exit(main())
