#!/usr/bin/env python3
"""Independent oracle for the C++ FP4 codecs and block quantizers.

Draws random and adversarial float32 values, converts them with the ml_dtypes package
(float4_e2m1fn, float8_e4m3fn, float8_e8m0fnu) and numpy, and compares bit for bit with
formats_oracle_tool (the C++ implementation). Exits 77 (ctest SKIP_RETURN_CODE) when
ml_dtypes is missing; scripts/test.sh installs it.

Where ml_dtypes' conversions differ from the specification we implement, the difference
is checked explicitly instead of ignored (ml_dtypes 0.4-0.6):
  * float8_e4m3fn conversion does NOT saturate: |x| > 464 (past the midpoint between 448
    and the next step, 480) becomes NaN (0x7F/0xFF). Our E4M3 encoder saturates to +-448
    (0x7E/0xFE) as FACTS.md and the PTX .satfinite conversions do. Values up to 464 round
    identically (464 is a tie and goes to the even 448 in both).
  * float4_e2m1fn has no NaN; ml_dtypes maps NaN to 0x8 (-0). Our encoder maps NaN to the
    saturated value; the block quantizers reject NaN before encoding, so NaN is excluded
    here. +-Inf saturates to +-6 in both.
  * Saturation and ties of float4_e2m1fn match the spec (checked below on the ties list
    before any random comparison), so no other exception is needed.
"""
import os
import subprocess
import sys
import tempfile

try:
    import numpy as np
    import ml_dtypes
except ImportError as e:  # pragma: no cover
    print(f"SKIP: {e} (pip install ml_dtypes)")
    sys.exit(77)

F4 = ml_dtypes.float4_e2m1fn
F8 = ml_dtypes.float8_e4m3fn
E8 = ml_dtypes.float8_e8m0fnu
TOOL = sys.argv[1]
RNG = np.random.default_rng(20261129)
failures = []


def check(name, ok, detail=""):
    if not ok:
        failures.append(f"{name}: {detail}")
        print(f"FAIL {name}: {detail}")
    else:
        print(f"ok   {name}")


def run(*args):
    subprocess.run([TOOL, *map(str, args)], check=True)


def bits_equal(a, b):
    return np.array_equal(np.asarray(a, np.float32).view(np.uint32),
                          np.asarray(b, np.float32).view(np.uint32))


def first_diff(a, b, x=None):
    i = int(np.flatnonzero(np.asarray(a) != np.asarray(b))[0])
    extra = f" input {x[i]!r}" if x is not None else ""
    return f"index {i}: ours {a[i]!r} vs ml_dtypes {b[i]!r}{extra}"


def e2m1_codes(x):
    return np.asarray(x, np.float32).astype(F4).view(np.uint8) & 0xF


def adversarial_values():
    ties = np.array([0.25, 0.75, 1.25, 1.75, 2.5, 3.5, 5.0], np.float32)
    e2m1 = np.array([0, 0.5, 1, 1.5, 2, 3, 4, 6], np.float32)
    e4m3 = np.arange(0x7F, dtype=np.uint8).view(F8).astype(np.float32)
    e4m3_mid = (e4m3[:-1] + e4m3[1:]) / 2  # every E4M3 tie (exact in fp32)
    specials = np.array([0.0, -0.0, 6.0, 7.0, 448.0, 449.0, 463.99, 464.0, 1e30, np.inf,
                         1e-45, 2.0**-126, 2.0**-10, 2.0**-9, 3 * 2.0**-10, 2.0**-6,
                         np.nextafter(np.float32(2.0**-10), np.float32(1))], np.float32)
    base = np.concatenate([ties, e2m1, e4m3, e4m3_mid, specials])
    around = np.concatenate([np.nextafter(base, np.float32(np.inf)),
                             np.nextafter(base, np.float32(-np.inf))]).astype(np.float32)
    allv = np.concatenate([base, around])
    return np.concatenate([allv, -allv]).astype(np.float32)


def random_values(n):
    with np.errstate(over="ignore"):  # 2^128 and up become inf and are dropped below
        mags = np.exp2(RNG.uniform(-150, 130, n)).astype(np.float32)
    normal = RNG.standard_normal(n).astype(np.float32) * np.float32(3)
    uni = RNG.uniform(-500, 500, n).astype(np.float32)
    x = np.concatenate([mags * RNG.choice([-1, 1], n), normal, uni]).astype(np.float32)
    return x[np.isfinite(x)]


def test_decodes(tmp):
    out = os.path.join(tmp, "decode.bin")
    run("decode", out)
    got = np.fromfile(out, np.float32)
    e2m1, e4m3, e8m0 = got[:16], got[16:272], got[272:]
    codes = np.arange(256, dtype=np.uint8)
    check("E2M1 decode, all 16 codes",
          bits_equal(e2m1, np.arange(16, dtype=np.uint8).view(F4).astype(np.float32)))
    ref = codes.view(F8).astype(np.float32)
    nan = np.isnan(ref)
    check("E4M3 decode, all 256 codes",
          bits_equal(e4m3[~nan], ref[~nan]) and np.isnan(e4m3[nan]).all()
          and nan.sum() == 2)
    ref = codes.view(E8).astype(np.float32)
    nan = np.isnan(ref)
    check("UE8M0 decode, all 256 codes",
          bits_equal(e8m0[~nan], ref[~nan]) and np.isnan(e8m0[nan]).all()
          and list(np.flatnonzero(nan)) == [255])


def test_encodes(tmp):
    # Spec sanity of the oracle itself before trusting it: FACTS.md ties and saturation.
    ties = np.array([0.25, 0.75, 1.25, 1.75, 2.5, 3.5, 5, 7, 100, np.inf, -0.1, -np.inf],
                    np.float32)
    check("ml_dtypes E2M1 follows the spec (ties to even, saturation, -0)",
          list(e2m1_codes(ties)) == [0, 2, 2, 4, 4, 6, 6, 7, 7, 7, 8, 15])
    check("ml_dtypes E4M3 is non-saturating (documented difference)",
          list(np.array([464, 465], np.float32).astype(F8).view(np.uint8)) == [0x7E, 0x7F])

    x = np.concatenate([adversarial_values(), random_values(200000)])
    x = np.concatenate([x, np.array([np.inf, -np.inf], np.float32)])
    inp, out = os.path.join(tmp, "enc.in"), os.path.join(tmp, "enc.out")
    x.tofile(inp)
    run("encode", inp, out)
    got = np.fromfile(out, np.uint8)
    ours_e2m1, ours_e4m3 = got[:len(x)], got[len(x):]
    ref = e2m1_codes(x)
    check(f"E2M1 encode, {len(x)} values", np.array_equal(ours_e2m1, ref),
          "" if np.array_equal(ours_e2m1, ref) else first_diff(ours_e2m1, ref, x))
    with np.errstate(over="ignore", invalid="ignore"):
        ref = x.astype(F8).view(np.uint8)
    fits = np.abs(x) <= 464
    same = np.array_equal(ours_e4m3[fits], ref[fits])
    check(f"E4M3 encode, {fits.sum()} values up to |x| = 464", same,
          "" if same else first_diff(ours_e4m3[fits], ref[fits], x[fits]))
    big = ~fits
    sat = np.where(np.signbit(x[big]), 0xFE, 0x7E).astype(np.uint8)
    check(f"E4M3 encode, {big.sum()} values above 464 saturate (ml_dtypes: NaN)",
          np.array_equal(ours_e4m3[big], sat) and np.all((ref[big] & 0x7F) == 0x7F))


def adversarial_matrix(rows, cols, block):
    x = (RNG.standard_normal((rows, cols)) *
         np.exp2(RNG.uniform(-20, 20, (rows, 1)))).astype(np.float32)
    nb = cols // block
    x[0, :block] = 0.0                                            # all-zero block
    x[0, block:2 * block] = -0.0
    if nb > 2:
        x[0, 2 * block:3 * block] = 1.0
        x[0, 2 * block] = 1.75 * 8                                # amax mantissa > 1.5
        x[0, 2 * block + 1] = 1.5 * 8
        x[0, 2 * block + 2] = 2.5 * 0.5                           # ties after scaling
    if rows > 1:
        x[1] = (RNG.standard_normal(cols) * 1e-40).astype(np.float32)  # subnormals
    if rows > 2:
        x[2] = np.float32(3e38) * np.sign(RNG.standard_normal(cols)).astype(np.float32)
    if rows > 3:
        for b in range(nb):  # ties of E2M1 at every magnitude after the block scale
            x[3, b * block:(b + 1) * block] = np.float32(2.0 ** (b - 3)) * RNG.choice(
                [0.25, 0.75, 1.25, 1.75, 2.5, 3.5, 5, 6, -5, -0.25], block).astype(np.float32)
    return x


def unpack(packed):
    out = np.empty(packed.size * 2, np.uint8)
    out[0::2] = packed & 0xF
    out[1::2] = packed >> 4
    return out


def ref_mxfp4(x):
    blocks = x.reshape(-1, 32)
    amax = np.abs(blocks).max(axis=1)
    _, e = np.frexp(amax)                      # amax = f * 2^e, f in [0.5, 1)
    shared = np.clip(e.astype(np.int64) - 1 - 2, -127, 127)
    shared = np.where(amax == 0, -127, shared)
    scale = np.ldexp(np.float64(1), shared)    # exact power of two
    scale_codes = scale.astype(E8).view(np.uint8)
    q = (blocks / scale[:, None].astype(np.float32)).astype(np.float32)
    codes = e2m1_codes(q).reshape(-1)
    deq = (codes.view(F4).astype(np.float32).reshape(-1, 32) *
           scale_codes.view(E8).astype(np.float32)[:, None]).reshape(-1)
    return scale_codes, codes, deq


def ref_nvfp4(x):
    amax = np.float32(np.abs(x).max())
    ws2 = np.float32(1) if amax == 0 else np.float32(amax / np.float32(2688))
    blocks = x.reshape(-1, 16)
    amax_b = np.abs(blocks).max(axis=1).astype(np.float32)
    six = np.float32(np.float32(6) * ws2)
    s = np.maximum((amax_b / six).astype(np.float32), np.float32(2.0 ** -9))
    scales = s.astype(F8).view(np.uint8)
    scales = np.where(amax_b == 0, np.uint8(0x38), scales).astype(np.uint8)
    denom = (scales.view(F8).astype(np.float32) * ws2).astype(np.float32)
    q = (blocks / denom[:, None]).astype(np.float32)
    codes = e2m1_codes(q).reshape(-1)
    deq = ((codes.view(F4).astype(np.float32).reshape(-1, 16) *
            scales.view(F8).astype(np.float32)[:, None]).astype(np.float32) * ws2)
    return ws2, scales, codes, deq.astype(np.float32).reshape(-1)


def test_blocks(tmp):
    for fmt, block in (("mxfp4", 32), ("nvfp4", 16)):
        for rows, cols in ((1, block), (5, 3 * block), (17, 4 * block), (64, 1024)):
            x = adversarial_matrix(rows, cols, block)
            if fmt == "nvfp4" and rows > 2:
                x[2] = x[2] / np.float32(1e30)  # keep amax sane so other rows matter
            inp, out = os.path.join(tmp, "m.in"), os.path.join(tmp, "m.out")
            x.tofile(inp)
            run(fmt, rows, cols, inp, out)
            raw = np.fromfile(out, np.uint8)
            n, nb = rows * cols, rows * cols // block
            name = f"{fmt} [{rows}, {cols}]"
            if fmt == "mxfp4":
                scales, packed = raw[:nb], raw[nb:nb + n // 2]
                deq = raw[nb + n // 2:].view(np.float32)
                rs, rc, rd = ref_mxfp4(x.reshape(-1))
            else:
                ws2 = raw[:4].view(np.float32)[0]
                scales, packed = raw[4:4 + nb], raw[4 + nb:4 + nb + n // 2]
                deq = raw[4 + nb + n // 2:].view(np.float32)
                rws2, rs, rc, rd = ref_nvfp4(x.reshape(-1))
                check(f"{name} weight_scale_2", bits_equal([ws2], [rws2]), f"{ws2} vs {rws2}")
            check(f"{name} scales", np.array_equal(scales, rs),
                  "" if np.array_equal(scales, rs) else first_diff(scales, rs))
            codes = unpack(packed)
            check(f"{name} elements", np.array_equal(codes, rc),
                  "" if np.array_equal(codes, rc) else first_diff(codes, rc, x.reshape(-1)))
            check(f"{name} dequantized", bits_equal(deq, rd),
                  "" if bits_equal(deq, rd) else first_diff(deq, rd))


def main():
    print(f"ml_dtypes {ml_dtypes.__version__}, numpy {np.__version__}")
    with tempfile.TemporaryDirectory(prefix="qprof_oracle_") as tmp:
        test_decodes(tmp)
        test_encodes(tmp)
        test_blocks(tmp)
    if failures:
        print(f"{len(failures)} check(s) failed")
        return 1
    print("all checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
