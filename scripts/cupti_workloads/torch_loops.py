#!/usr/bin/env python3
"""An unmodified PyTorch program for `qprof record`: a bf16 matmul loop (tensor cores) and
an elementwise loop (CUDA cores only), each inside an NVTX range, so the device check can
verify per-kernel times, NVTX paths and the tensor-pipe split. Needs torch with CUDA."""
import sys

import torch


def main() -> int:
    if not torch.cuda.is_available():
        print("torch_loops: no CUDA device", file=sys.stderr)
        return 2
    torch.manual_seed(0)
    n = 8192  # 8192^3 bf16 GEMM: ~1.1 TFLOP, long enough for the tensor pipe to dominate
    a = torch.randn(n, n, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(n, n, device="cuda", dtype=torch.bfloat16)
    x = torch.randn(64 << 20, device="cuda", dtype=torch.float32)
    torch.cuda.synchronize()
    torch.cuda.nvtx.range_push("bench")
    torch.cuda.nvtx.range_push("matmul")
    for _ in range(10):
        c = a @ b
    torch.cuda.nvtx.range_pop()
    torch.cuda.nvtx.range_push("elementwise")
    for _ in range(10):
        x = x * 1.0001 + 0.5
    torch.cuda.nvtx.range_pop()
    torch.cuda.nvtx.range_pop()
    torch.cuda.synchronize()
    print(f"torch_loops: done ({float(c[0, 0]):.1f}, {float(x[0]):.3f})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
