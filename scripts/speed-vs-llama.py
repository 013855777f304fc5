#!/usr/bin/env python3
"""Prefill and decode speed of realizar-host against a native llama.cpp build.

Alternates `realizar-host bench --json` and llama.cpp's `llama-bench -o json`
on the same file and thread count, ROUNDS times each (one warm-up run of ours
first), and prints each side's median prefill and decode tok/s over the rounds
and their ratios. Both prefill the whole prompt from an empty cache each run
(bench's prefill_tokens is checked); decode is G tokens from an empty cache on
both sides (llama-bench's tg test; ours a 1-token prompt), so a long prompt
does not slow one side's decode only.

  scripts/speed-vs-llama.py [--rounds 3] [--threads 1,2] [-p 128,512] [-n 64] [--reps 3] MODEL.gguf...

Each prompt length of -p is its own pair of runs (decode is measured after each).

llama-bench comes from `make llama-native` (.cache/llama-native/bin); ours from
bin/realizar-host (`make build`).
"""
import argparse
import json
import os
import statistics
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def ours(binary, model, threads, p, n, reps):
    out = subprocess.run([binary, "bench", "-m", model, "-t", str(threads), "--prompt-tokens", str(p),
                          "--gen-tokens", str(n), "--repetitions", str(reps), "--json"],
                         check=True, capture_output=True, text=True).stdout
    r = json.loads(out)
    if r["prefill_tokens"] < p:
        sys.exit(f"bench prefilled {r['prefill_tokens']} of {p} tokens")
    return r["prefill_tok_per_s"]["median"], r["decode_tok_per_s"]["median"]


def theirs(binary, model, threads, p, n, reps):
    out = subprocess.run([binary, "-m", model, "-t", str(threads), "-p", str(p), "-n", str(n),
                          "-r", str(reps), "-o", "json"], check=True, capture_output=True, text=True).stdout
    pp = tg = None
    for t in json.loads(out):
        if t["n_prompt"] == p and t["n_gen"] == 0:
            pp = t["avg_ts"]
        if t["n_gen"] == n and t["n_prompt"] == 0:
            tg = t["avg_ts"]
    return pp, tg


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("models", nargs="+")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("-p", default="128", help="comma-separated prompt lengths")
    ap.add_argument("-n", type=int, default=64)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--ours", default=os.path.join(ROOT, "bin", "realizar-host"))
    ap.add_argument("--llama-bench", default=os.path.join(ROOT, ".cache", "llama-native", "bin", "llama-bench"))
    a = ap.parse_args()
    print("| model | threads | prompt | prefill ours / llama.cpp (tok/s) | ratio | decode ours / llama.cpp (tok/s) | ratio |")
    print("|---|---|---|---|---|---|---|")
    for model in a.models:
        for t in [int(x) for x in a.threads.split(",")]:
            for p in [int(x) for x in a.p.split(",")]:
                ours(a.ours, model, t, p, a.n, 1)  # warm-up: page cache, CPU clocks
                rows = {"op": [], "od": [], "tp": [], "td": []}
                for _ in range(a.rounds):
                    op, _ = ours(a.ours, model, t, p, 1, a.reps)
                    _, od = ours(a.ours, model, t, 1, a.n, a.reps)
                    tp, td = theirs(a.llama_bench, model, t, p, a.n, a.reps)
                    for k, v in zip(("op", "od", "tp", "td"), (op, od, tp, td)):
                        rows[k].append(v)
                    print(f"  round: prefill {op:.1f} / {tp:.1f}, decode {od:.1f} / {td:.1f}", file=sys.stderr)
                m = {k: statistics.median(v) for k, v in rows.items()}
                print(f"| {os.path.basename(model)} | {t} | {p} | {m['op']:.1f} / {m['tp']:.1f} | {m['op']/m['tp']:.2f}× "
                      f"| {m['od']:.1f} / {m['td']:.1f} | {m['od']/m['td']:.2f}× |", flush=True)


if __name__ == "__main__":
    main()
