#!/usr/bin/env python3
"""Drive an OpenAI-compatible server with C concurrent streaming clients.

Each client sends streaming /v1/completions requests one after another
(greedy, ignore_eos, a fixed max_tokens) until --requests requests have
been sent in all or --seconds have passed; then it prints the aggregate
decode throughput (completion tokens over the wall time of the run) and
the p50 / p99 time between tokens within a stream.

Loopback only: the URL's host must be 127.0.0.1, ::1 or localhost. Works
against realizar-host serve and llama.cpp's llama-server alike.

    scripts/load.py --url http://127.0.0.1:8080 --clients 8 --requests 32 --max-tokens 64
    scripts/load.py ... --long-prompt 1024 --long-after 2.0   # one more client, later, with a long prompt
    scripts/load.py ... --json                                # one JSON document

Standard library only.
"""
import argparse
import http.client
import json
import statistics
import sys
import threading
import time
import urllib.parse

PROMPT = ("The quick brown fox jumps over the lazy dog. Once upon a time, in a land far away, "
          "there lived a curious child who liked to count the stars. ")


def percentile(xs, q):
    if not xs:
        return 0.0
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(q * len(xs)))]


class Stream:
    """One streaming request: token arrival times and the usage count."""

    def __init__(self):
        self.times = []
        self.tokens = 0
        self.error = None
        self.start = 0.0


def run_stream(url, key, prompt, max_tokens, timeout):
    u = urllib.parse.urlparse(url)
    s = Stream()
    body = json.dumps({"prompt": prompt, "max_tokens": max_tokens, "stream": True, "temperature": 0,
                       "ignore_eos": True, "cache_prompt": False,
                       "stream_options": {"include_usage": True}})
    headers = {"Content-Type": "application/json"}
    if key:
        headers["Authorization"] = "Bearer " + key
    conn = http.client.HTTPConnection(u.hostname, u.port or 80, timeout=timeout)
    s.start = time.monotonic()
    try:
        conn.request("POST", "/v1/completions", body=body, headers=headers)
        resp = conn.getresponse()
        if resp.status != 200:
            s.error = "HTTP %d: %s" % (resp.status, resp.read()[:200].decode("utf-8", "replace"))
            return s
        chunks = 0
        for raw in resp:
            line = raw.strip()
            if not line.startswith(b"data:"):
                continue
            data = line[5:].strip()
            if data == b"[DONE]":
                break
            ev = json.loads(data)
            now = time.monotonic()
            if ev.get("usage") and ev["usage"].get("completion_tokens"):
                s.tokens = ev["usage"]["completion_tokens"]
            for ch in ev.get("choices") or []:
                if ch.get("text"):
                    s.times.append(now)
                    chunks += 1
        if s.tokens == 0:
            s.tokens = chunks
    except Exception as e:  # a dropped connection, a timeout
        s.error = repr(e)
    finally:
        conn.close()
    return s


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--url", default="http://127.0.0.1:8080")
    ap.add_argument("--key", default="")
    ap.add_argument("--clients", type=int, default=8)
    ap.add_argument("--requests", type=int, default=32, help="requests in all (bounded)")
    ap.add_argument("--seconds", type=float, default=120, help="stop sending after this long (bounded)")
    ap.add_argument("--max-tokens", type=int, default=64)
    ap.add_argument("--prompt-words", type=int, default=16, help="words in each client's prompt")
    ap.add_argument("--long-prompt", type=int, default=0, help="words of one extra, later request (0: none)")
    ap.add_argument("--long-after", type=float, default=2.0, help="seconds before the long request starts")
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args()
    host = urllib.parse.urlparse(a.url).hostname
    if host not in ("127.0.0.1", "::1", "localhost"):
        sys.exit("load.py: loopback only (127.0.0.1, ::1, localhost), not %s" % host)
    if a.clients < 1 or a.requests < 1 or a.seconds <= 0:
        sys.exit("load.py: --clients, --requests and --seconds must be positive")

    words = PROMPT.split()
    def prompt(i, n):
        return " ".join(words[(i + j) % len(words)] for j in range(n))

    lock = threading.Lock()
    sent = [0]
    streams = []
    deadline = time.monotonic() + a.seconds

    def client(i):
        k = 0
        while True:
            with lock:
                if sent[0] >= a.requests or time.monotonic() > deadline:
                    return
                sent[0] += 1
            s = run_stream(a.url, a.key, "%d.%d %s" % (i, k, prompt(i + k, a.prompt_words)), a.max_tokens,
                           timeout=a.seconds + 60)
            k += 1
            with lock:
                streams.append(s)

    long_stream = []
    def long_client():
        time.sleep(a.long_after)
        long_stream.append(run_stream(a.url, a.key, prompt(7, a.long_prompt), a.max_tokens, timeout=a.seconds + 60))

    t0 = time.monotonic()
    threads = [threading.Thread(target=client, args=(i,)) for i in range(a.clients)]
    if a.long_prompt > 0:
        threads.append(threading.Thread(target=long_client))
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    wall = time.monotonic() - t0

    ok = [s for s in streams if s.error is None]
    errors = [s.error for s in streams if s.error is not None]
    tokens = sum(s.tokens for s in ok)
    gaps = [b - a_ for s in ok for a_, b in zip(s.times, s.times[1:])]
    out = {"url": a.url, "clients": a.clients, "requests": len(streams), "errors": len(errors),
           "completion_tokens": tokens, "wall_s": round(wall, 3),
           "aggregate_tok_per_s": round(tokens / wall, 2) if wall > 0 else 0.0,
           "gap_p50_ms": round(1000 * percentile(gaps, 0.50), 2),
           "gap_p99_ms": round(1000 * percentile(gaps, 0.99), 2)}
    if long_stream:
        ls = long_stream[0]
        t_long = ls.start
        # The others' gaps while the long prompt was being prefilled (from
        # its start to its first token).
        t_first = ls.times[0] if ls.times else t_long
        during = [b - a_ for s in ok for a_, b in zip(s.times, s.times[1:]) if a_ >= t_long and b <= t_first + 0.001]
        out["long_prompt_ttft_s"] = round(t_first - t_long, 3)
        out["gap_p99_during_long_prefill_ms"] = round(1000 * percentile(during, 0.99), 2)
        out["gaps_during_long_prefill"] = len(during)
        if ls.error:
            out["long_error"] = ls.error
    if errors:
        out["first_error"] = errors[0]
    if a.json:
        print(json.dumps(out))
    else:
        print("%(requests)d requests (%(errors)d errors), %(completion_tokens)d tokens in %(wall_s).2fs: "
              "aggregate %(aggregate_tok_per_s).1f tok/s; time between tokens p50 %(gap_p50_ms).1f ms, "
              "p99 %(gap_p99_ms).1f ms" % out)
        if "long_prompt_ttft_s" in out:
            print("long prompt: first token after %(long_prompt_ttft_s).2fs; the others' p99 gap during its "
                  "prefill %(gap_p99_during_long_prefill_ms).1f ms (%(gaps_during_long_prefill)d gaps)" % out)
        if errors:
            print("first error:", errors[0])
    return 0 if not errors else 1


if __name__ == "__main__":
    sys.exit(main())
