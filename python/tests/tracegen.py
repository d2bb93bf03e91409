"""Small Kineto (PyTorch profiler) traces written by the tests themselves."""
import json
import os


def _us(ns):
    # Microseconds with three decimals: exactly the nanoseconds.
    return f"{ns // 1000}.{ns % 1000:03d}"


def write_kineto(path, kernels, rank=None, world=None, shift_ns=0):
    """kernels: (name, start_ns, dur_ns, stream) tuples on device 0."""
    head = {"schemaVersion": 1}
    if rank is not None:
        head["distributedInfo"] = {"backend": "nccl", "rank": rank, "world_size": world}
    events = []
    for corr, (name, start, dur, stream) in enumerate(kernels, 1):
        events.append(
            '{"ph": "X", "cat": "kernel", "name": %s, "pid": 0, "tid": %d, "ts": %s, '
            '"dur": %s, "args": {"device": 0, "stream": %d, "correlation": %d}}'
            % (json.dumps(name), stream, _us(start + shift_ns), _us(dur), stream, corr))
    text = json.dumps(head)[:-1] + ', "traceEvents": [\n' + ",\n".join(events) + "\n]}\n"
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)
    return path


# A decode step as a serving engine runs it: GEMMs on tensor cores, a SIMT MoE GEMV, a
# norm and an all-reduce (names the name rules know).
STEP = [
    ("sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64_warpgroupsize1x1x1", 41000),
    ("_mxfp4_slot_gemv_kernel", 97000),
    ("void at::native::rms_norm_kernel<float>(float*, float const*, int)", 4000),
    ("ncclDevKernel_AllReduce_Sum_bf16_RING_LL(ncclDevKernelArgsStorage<4096ul>)", 23000),
    ("void flash_fwd_splitkv_kernel<Flash_fwd_kernel_traits<128, 64, 128, 4>>(Flash_fwd_params)",
     31000),
]


def write_rank_set(folder, ranks=16, steps=20, slow_rank=5, slow_factor=1.3):
    """One Kineto trace per rank; rank `slow_rank` computes `slow_factor` times slower."""
    paths = []
    for r in range(ranks):
        kernels, t = [], 0
        for s in range(steps):
            for i, (name, dur) in enumerate(STEP):
                d = dur + 37 * ((r * 7 + s * 3 + i) % 11)  # a little jitter, deterministic
                if r == slow_rank and "nccl" not in name:
                    d = int(d * slow_factor)
                kernels.append((name, t, d, 7))
                t += d + 1500
        paths.append(write_kineto(os.path.join(folder, f"rank{r:02d}.json"), kernels,
                                  rank=r, world=ranks, shift_ns=r * 1_000_000_000))
    return paths
