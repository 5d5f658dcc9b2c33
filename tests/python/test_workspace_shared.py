"""One zeroed workspace shared by calls with different split plans (what W4A16Linear.forward does
for every layer of a stream): each call must leave the workspace as it needs it at entry, so a
later call whose tickets land where an earlier call kept its fp32 partials still gives
its own bits. Each result is compared bit for bit with the same call on a fresh zeroed
workspace, into a NaN-poisoned output, in several orders."""

import re
from pathlib import Path

import pytest
import torch

from checkpoints import BOUND, errors, frame_from_gptq_v2, random_gptq, reference, run_out

pytestmark = pytest.mark.gpu

# The head of the workspace that holds the tickets, as the kernels state it.
TICKET_BYTES = int(re.search(r"kWorkspaceTicketBytes = (\d+);",
                             (Path(__file__).resolve().parents[2] / "kernels/params.cuh").read_text()).group(1))

# K x N of the decode layers whose plans split K (bulk's even split and stream-K, bwg's 16-token
# split, dec, bwg's 32- and 64-token splits at 33-64 tokens), and a prefill split.
LAYERS = [
    (14336, 4096, 1), (4096, 4096, 1), (8192, 10240, 1), (8960, 1536, 1),
    (8192, 2560, 8), (14336, 4096, 8), (8192, 8192, 8), (8960, 1536, 3),
    (4096, 6144, 16), (8192, 4096, 16), (14336, 4096, 16), (8960, 1536, 16),
    (4096, 4096, 64), (14336, 4096, 48), (4096, 4096, 256),
]


def test_one_workspace_across_split_plans():
    gen = torch.Generator("cuda").manual_seed(20261203)
    calls = []
    for K, N, M in LAYERS:
        ck = random_gptq(K, N, 128, True, torch.float16, "cuda", gen=gen)
        fr = frame_from_gptq_v2(ck)
        x = torch.randn(M, K, generator=gen, device="cuda").half()
        need = torch.ops.mate.w4a16_workspace_size(x, fr.meta)
        alone = run_out(x, fr, workspace=torch.zeros(max(need, 1), dtype=torch.uint8, device="cuda"))
        calls.append(((K, N), fr, x, need, alone, ck))
    assert sum(c[3] > 0 for c in calls) >= 10, "too few split plans to test sharing"
    for kn, fr, x, need, alone, ck in calls:
        total, col = errors(alone, reference(ck, x, None))
        assert total <= BOUND[torch.float16] and col <= 5 * BOUND[torch.float16], (kn, x.shape, total, col)
    ws = torch.zeros(max(c[3] for c in calls), dtype=torch.uint8, device="cuda")
    n = len(calls)
    orders = [list(range(n)), list(reversed(range(n))), [(7 * i) % n for i in range(n)] * 2]
    for order in orders:
        for i in order:
            kn, fr, x, need, alone, _ = calls[i]
            out = run_out(x, fr, workspace=ws if need > 0 else None)
            assert torch.equal(out, alone), (
                f"K x N = {kn}, M = {x.shape[0]}: differs after sharing the workspace "
                f"(NaN: {int(out.isnan().sum())})"
            )
            if need > 0:  # every call leaves its tickets zero
                assert int(ws[:TICKET_BYTES].count_nonzero()) == 0, f"K x N = {kn}, M = {x.shape[0]}: tickets left set"
    torch.cuda.synchronize()
