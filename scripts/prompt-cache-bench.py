#!/usr/bin/env python3
"""Measures the server's prompt cache: a chat's second request with and
without cache_prompt, against a running `realizar-host serve` (one anonymous
tenant). Prints prompt tokens, reused tokens, prefill ms and whether the text
equals the uncached request's.

    realizar-host serve -m MODEL.gguf --addr 127.0.0.1:18080 -t 2 &
    scripts/prompt-cache-bench.py [http://127.0.0.1:18080]
"""
import json
import sys
import time
import urllib.request

base = sys.argv[1] if len(sys.argv) > 1 else "http://127.0.0.1:18080"


def chat(msgs, cache):
    body = {"messages": msgs, "max_tokens": 16, "seed": 1, "top_k": 40, "cache_prompt": cache}
    req = urllib.request.Request(base + "/v1/chat/completions", data=json.dumps(body).encode(),
                                 headers={"Content-Type": "application/json"})
    t = time.time()
    r = json.load(urllib.request.urlopen(req))
    return r, time.time() - t


story = "Once upon a time there was a little girl named Lily who loved to play outside in the park with her friends. " * 6
first = [{"role": "user", "content": story + " Tell me what happened next."}]
r1, _ = chat(first, True)
second = first + [{"role": "assistant", "content": r1["choices"][0]["message"]["content"]},
                  {"role": "user", "content": "And then?"}]
texts = {}
for cache in (False, True, False, True):
    chat(first, True)  # the conversation so far is what the model holds
    r, wall = chat(second, cache)
    x = r["realizar"]
    text = r["choices"][0]["message"]["content"]
    texts.setdefault(cache, text)
    print(f"cache_prompt={str(cache).lower():5}  prompt {r['usage']['prompt_tokens']} tok  "
          f"reused {x['reused_tokens']}  prefill {x['prefill_ms']:.1f} ms  wall {wall * 1000:.0f} ms")
print("same text with and without the cache:", texts[True] == texts[False])
