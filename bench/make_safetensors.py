#!/usr/bin/env python3
"""Writes a synthetic F32 safetensors file for timing `qprof quantize`.

    bench/make_safetensors.py OUT.safetensors [--tensors 64] [--rows 4096] [--cols 4096]

Tensors are named layers.<i>.mlp.w<j>.weight, filled with N(0, 0.02) values (seeded), and
streamed to disk one at a time so memory stays at one tensor. 64 x 4096 x 4096 F32 is
4.3 GB: put it on a disk with room and delete it afterwards.
"""
import argparse
import json
import struct

import numpy as np


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--tensors", type=int, default=64)
    ap.add_argument("--rows", type=int, default=4096)
    ap.add_argument("--cols", type=int, default=4096)
    a = ap.parse_args()
    nbytes = a.rows * a.cols * 4
    header = {"__metadata__": {"format": "pt"}}
    names = [f"layers.{i // 4}.mlp.w{i % 4}.weight" for i in range(a.tensors)]
    for i, name in enumerate(names):
        header[name] = {"dtype": "F32", "shape": [a.rows, a.cols],
                        "data_offsets": [i * nbytes, (i + 1) * nbytes]}
    text = json.dumps(header).encode()
    text += b" " * ((8 - len(text) % 8) % 8)
    rng = np.random.default_rng(7)
    with open(a.out, "wb") as f:
        f.write(struct.pack("<Q", len(text)))
        f.write(text)
        for _ in names:
            rng.standard_normal((a.rows, a.cols), dtype=np.float32).__imul__(0.02).tofile(f)
    print(f"wrote {a.out}: {a.tensors} x [{a.rows}, {a.cols}] F32, {a.tensors * nbytes / 1e9:.2f} GB")


if __name__ == "__main__":
    main()
