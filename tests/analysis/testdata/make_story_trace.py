#!/usr/bin/env python3
"""Writes story_sglang_mxfp4_kineto.json: a SYNTHETIC PyTorch-profiler (Kineto) trace shaped
like the user story (DESIGN.md): DeepSeek-V4-Flash decode on one of 8 RTX PRO 6000 (sm_120,
188 SMs), TP 8, batch 16, MXFP4 experts, eager launches from an SGLang-like stack.

Nothing here was measured. Kernel names are the story's; launch shapes follow the story's
description (one (token, expert) slot per program: 16 x 6 = 96 programs; sparse decode:
batch x heads/TP = 16 x 8 = 128 programs); durations are chosen so that the slot-GEMV and
the sparse decode take the story's published shares (39% and 38%). It exercises launch
contexts, occupancy and the latency diagnosis, not the model.

    python3 tests/analysis/testdata/make_story_trace.py > tests/analysis/testdata/story_sglang_mxfp4_kineto.json
"""
import json

LAYERS, STEPS = 3, 2
PID, TID, DEV, STREAM = 4242, 4242, 0, 7
events = []
corr = [1000]
cpu_t = [0.0]
gpu_t = [5000.0]


def frame(cat, name, ts, dur):
    events.append({"ph": "X", "cat": cat, "name": name, "pid": PID, "tid": TID,
                   "ts": round(ts, 3), "dur": round(dur, 3)})


def launch(name, dur_us, grid, block, regs, smem, stack, api="cuLaunchKernel"):
    """One kernel launched under `stack` (list of (cat, name), outermost first)."""
    t0 = cpu_t[0]
    depth = len(stack)
    for i, (cat, fname) in enumerate(stack):  # nested frames around the launch call
        frame(cat, fname, t0 + 0.1 * i, 4.0 - 0.2 * i)
    corr[0] += 1
    events.append({"ph": "X", "cat": "cuda_driver" if api.startswith("cu") else "cuda_runtime",
                   "name": api, "pid": PID, "tid": TID, "ts": round(t0 + 0.1 * depth + 0.5, 3),
                   "dur": 1.0, "args": {"correlation": corr[0]}})
    events.append({"ph": "X", "cat": "kernel", "name": name, "pid": DEV, "tid": STREAM,
                   "ts": round(gpu_t[0], 3), "dur": dur_us,
                   "args": {"device": DEV, "stream": STREAM, "correlation": corr[0],
                            "registers per thread": regs, "shared memory": smem,
                            "grid": list(grid), "block": list(block)}})
    cpu_t[0] += 5.0
    gpu_t[0] += dur_us + 1.0


RUNNER = ("python_function", "sglang/srt/model_executor/model_runner.py(1890): forward_decode")
MODEL = ("python_function", "nn.Module: DeepseekV4ForCausalLM_0")

for step in range(STEPS):
    step_start = cpu_t[0]
    for layer in range(LAYERS):
        LAYER = ("python_function", f"nn.Module: DeepseekV4DecoderLayer_{layer}")
        base = [RUNNER, MODEL, LAYER]
        norm = base + [("python_function", "nn.Module: RMSNorm_0"),
                       ("python_function", "sglang/srt/layers/layernorm.py(120): forward_cuda")]
        launch("void flashinfer::norm::FusedAddRMSNormKernel<8u, __nv_bfloat16>(__nv_bfloat16*, __nv_bfloat16*, __nv_bfloat16*, unsigned int, unsigned int, unsigned int, float, float)",
               3.0, (16, 1, 1), (512, 1, 1), 32, 0, norm)
        attn = base + [("python_function", "nn.Module: DeepseekV4Attention_0")]
        for n in range(4):  # q/kv/index projections: cuBLAS tensor-core GEMMs
            launch("nvjet_tst_64x8_64x16_4x1_v_bz_TNT", 4.0, (32, 1, 1), (128, 1, 1), 168, 90112,
                   attn + [("python_function", "nn.Module: ReplicatedLinear_0"), ("cpu_op", "aten::mm")],
                   api="cudaLaunchKernel")
        launch("_indexer_topk_kernel", 10.0, (16, 1, 1), (1024, 1, 1), 64, 32768,
               attn + [("python_function", "nn.Module: Indexer_0"),
                       ("python_function", "sglang/srt/layers/attention/nsa/nsa_indexer.py(410): forward"),
                       ("python_function", "triton/runtime/jit.py(330): <lambda>")])
        launch("_tiled_sparse_decode_kernel", 128.0, (8, 16, 1), (128, 1, 1), 168, 0,
               attn + [("python_function", "sglang/srt/layers/attention/nsa_backend.py(702): forward_decode"),
                       ("python_function", "sglang/srt/layers/attention/triton_ops/sparse_decode.py(88): sparse_decode_fwd"),
                       ("python_function", "triton/runtime/jit.py(330): <lambda>")])
        launch("nvjet_tst_64x8_64x16_4x1_v_bz_TNT", 4.0, (32, 1, 1), (128, 1, 1), 168, 90112,
               attn + [("python_function", "nn.Module: RowParallelLinear_0"), ("cpu_op", "aten::mm")],
               api="cudaLaunchKernel")
        ar = base + [("python_function", "sglang/srt/distributed/device_communicators/custom_all_reduce.py(330): custom_all_reduce")]
        launch("void vllm::cross_device_reduce_1stage<__nv_bfloat16, 8>(vllm::RankData*, vllm::RankSignals, vllm::Signal*, __nv_bfloat16*, int, int)",
               15.0, (36, 1, 1), (512, 1, 1), 32, 0, ar)
        launch("void flashinfer::norm::FusedAddRMSNormKernel<8u, __nv_bfloat16>(__nv_bfloat16*, __nv_bfloat16*, __nv_bfloat16*, unsigned int, unsigned int, unsigned int, float, float)",
               3.0, (16, 1, 1), (512, 1, 1), 32, 0, norm)
        moe = base + [("python_function", "nn.Module: DeepseekV4MoE_0")]
        launch("nvjet_tst_64x8_64x16_4x1_v_bz_TNT", 3.0, (8, 1, 1), (128, 1, 1), 168, 90112,
               moe + [("python_function", "nn.Module: ReplicatedLinear_1"), ("cpu_op", "aten::mm")],
               api="cudaLaunchKernel")
        launch("void moe::grouped_topk_kernel<float>(float*, float*, int*, float*, int, int, int, int)",
               3.0, (16, 1, 1), (256, 1, 1), 40, 2048,
               moe + [("python_function", "sglang/srt/layers/moe/topk.py(520): select_experts")])
        fused = moe + [("python_function", "nn.Module: FusedMoE_0"),
                       ("python_function", "sglang/srt/layers/moe/fused_moe_triton/layer.py(905): forward"),
                       ("python_function", "sglang/srt/layers/quantization/mxfp4.py(712): apply"),
                       ("python_function", "sglang/srt/layers/moe/mxfp4_slot_gemv.py(61): mxfp4_slot_gemv"),
                       ("python_function", "triton/runtime/jit.py(330): <lambda>")]
        launch("_mxfp4_slot_gemv_kernel", 120.0, (96, 1, 1), (128, 1, 1), 64, 0, fused)   # routed
        launch("_mxfp4_slot_gemv_kernel", 12.0, (16, 1, 1), (128, 1, 1), 64, 0, fused)    # shared
        launch("void vllm::cross_device_reduce_1stage<__nv_bfloat16, 8>(vllm::RankData*, vllm::RankSignals, vllm::Signal*, __nv_bfloat16*, int, int)",
               15.0, (36, 1, 1), (512, 1, 1), 32, 0, ar)
        launch("void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<c10::BFloat16>, std::array<char*, 3ul> >(int, at::native::CUDAFunctor_add<c10::BFloat16>, std::array<char*, 3ul>)",
               2.0, (64, 1, 1), (128, 1, 1), 16, 0, moe + [("cpu_op", "aten::add")], api="cudaLaunchKernel")
    samp = [RUNNER, ("python_function", "sglang/srt/layers/sampler.py(95): forward"), ("cpu_op", "aten::argmax")]
    launch("void at::native::reduce_kernel<512, 1, at::native::ReduceOp<float, at::native::ArgMaxOps<float>, unsigned int, long, 4> >(at::native::ReduceOp<float, at::native::ArgMaxOps<float>, unsigned int, long, 4>)",
           6.0, (16, 1, 1), (512, 1, 1), 32, 16, samp, api="cudaLaunchKernel")
    # The step: a record_function range around everything launched in it.
    events.append({"ph": "X", "cat": "user_annotation", "name": f"ProfilerStep#{step}", "pid": PID,
                   "tid": TID, "ts": round(step_start - 1.0, 3), "dur": round(cpu_t[0] - step_start + 1.0, 3)})

doc = {
    "schemaVersion": 1,
    "deviceProperties": [{
        "id": 0, "name": "NVIDIA RTX PRO 6000 Blackwell Server Edition",
        "totalGlobalMem": 102000000000, "computeMajor": 12, "computeMinor": 0,
        "maxThreadsPerBlock": 1024, "maxThreadsPerMultiprocessor": 1536, "regsPerBlock": 65536,
        "warpSize": 32, "sharedMemPerBlock": 49152, "numSms": 188,
        "regsPerMultiprocessor": 65536, "sharedMemPerBlockOptin": 101376,
        "sharedMemPerMultiprocessor": 102400}],
    "distributedInfo": {"backend": "nccl", "rank": 0, "world_size": 8},
    "traceName": "synthetic: shaped like the story (not measured)",
    "traceEvents": sorted(events, key=lambda e: (e["pid"], e["ts"])),
}
# One event per line: small, and diffs read line by line.
body = ",\n".join(json.dumps(e, separators=(",", ":")) for e in doc.pop("traceEvents"))
head = json.dumps(doc, separators=(",", ":"))[:-1]
print(head + ',"traceEvents":[\n' + body + "\n]}")
