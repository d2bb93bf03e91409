#!/usr/bin/env bash
# Folds the per-object ptxas logs (ptxas_log.sh) into one table per target architecture:
# <artifacts>/ptxas-<arch>.txt with kernel, registers, shared memory, stack frame and spill
# bytes. Kernels with spills are listed again at the end so that they are not missed.
# usage: ptxas_report.sh <log_dir> <artifacts_dir>
set -euo pipefail
log_dir=$1
art=$2
mkdir -p "$art"
rm -f "$art"/ptxas-*.txt
shopt -s nullglob
logs=("$log_dir"/*.ptxas.txt)
[ ${#logs[@]} -gt 0 ] || { echo "ptxas_report: no logs in $log_dir" >&2; exit 0; }
cat "${logs[@]}" | awk -v art="$art" '
  /Compiling entry function/ { split($0, q, "\047"); kern = q[2]; arch = q[4]
                               stack = "?"; spill = "?"; next }
  /bytes stack frame/ { stack = $1; spill = $5 "/" $9; next }
  /Used [0-9]+ registers/ {
    regs = "?"; smem = 0
    for (i = 1; i <= NF; i++) {
      if ($i == "registers,") regs = $(i - 1)
      if ($i == "smem" || $i == "smem,") smem = $(i - 2)
    }
    f = art "/ptxas-" arch ".txt"
    if (!(f in seen)) { seen[f] = 1
      printf "%-44s %5s %8s %6s %s\n", "kernel", "regs", "smem_B", "stack", "spill_st/ld_B" > f }
    printf "%-44s %5s %8s %6s %s\n", kern, regs, smem, stack, spill >> f
    if (spill != "0/0") spills[f] = spills[f] "  " kern " (" spill ")\n"
  }
  END { for (f in seen) { if (f in spills) printf "\nSPILLS:\n%s", spills[f] >> f
                          else printf "\nno spills\n" >> f } }'
ls "$art"/ptxas-*.txt
