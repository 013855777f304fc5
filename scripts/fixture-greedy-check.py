#!/usr/bin/env python3
# Greedy-decodes a GGUF with llama.cpp's prebuilt libllama through ctypes (no numpy)
# and prints the distinct-token count, top-2 logit gaps and logit std: the check
# that random-weight fixtures are not degenerate (see internal/fixture/doc.go).
# Usage: LLAMAREF_DIR=/work/refcache scripts/fixture-greedy-check.py MODEL.gguf [N]
import ctypes, os, statistics, sys
lib = os.path.join(os.environ.get("LLAMAREF_DIR", ".cache/llamaref"), "lib") + "/"
ggml = ctypes.CDLL(lib + "libggml.so", mode=ctypes.RTLD_GLOBAL)
llama = ctypes.CDLL(lib + "libllama.so", mode=ctypes.RTLD_GLOBAL)
ggml.ggml_backend_load_all_from_path(lib.encode())
class Blob(ctypes.Structure):
    _fields_ = [("b", ctypes.c_char * 512)]
class Batch(ctypes.Structure):
    _fields_ = [("n_tokens", ctypes.c_int32), ("token", ctypes.c_void_p), ("embd", ctypes.c_void_p),
                ("pos", ctypes.c_void_p), ("n_seq_id", ctypes.c_void_p), ("seq_id", ctypes.c_void_p), ("logits", ctypes.c_void_p)]
V = ctypes.c_void_p
llama.llama_model_default_params.restype = Blob
llama.llama_context_default_params.restype = Blob
llama.llama_model_load_from_file.restype = V
llama.llama_model_load_from_file.argtypes = [ctypes.c_char_p, Blob]
llama.llama_init_from_model.restype = V
llama.llama_init_from_model.argtypes = [V, Blob]
llama.llama_model_get_vocab.restype = V
llama.llama_model_get_vocab.argtypes = [V]
llama.llama_vocab_n_tokens.argtypes = [V]
llama.llama_tokenize.argtypes = [V, ctypes.c_char_p, ctypes.c_int32, ctypes.POINTER(ctypes.c_int32), ctypes.c_int32, ctypes.c_bool, ctypes.c_bool]
llama.llama_batch_get_one.restype = Batch
llama.llama_batch_get_one.argtypes = [ctypes.POINTER(ctypes.c_int32), ctypes.c_int32]
llama.llama_decode.argtypes = [V, Batch]
llama.llama_get_logits_ith.restype = ctypes.POINTER(ctypes.c_float)
llama.llama_get_logits_ith.argtypes = [V, ctypes.c_int32]
llama.llama_token_get_text.restype = ctypes.c_char_p
llama.llama_vocab_get_text.restype = ctypes.c_char_p
llama.llama_vocab_get_text.argtypes = [V, ctypes.c_int32]
llama.llama_log_set(None, None)
path, n = sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 40
m = llama.llama_model_load_from_file(path.encode(), llama.llama_model_default_params())
ctx = llama.llama_init_from_model(m, llama.llama_context_default_params())
voc = llama.llama_model_get_vocab(m)
nv = llama.llama_vocab_n_tokens(voc)
text = b"Once upon a time"
buf = (ctypes.c_int32 * 64)()
nt = llama.llama_tokenize(voc, text, len(text), buf, 64, True, False)
toks = list(buf[:nt])
batch_toks = (ctypes.c_int32 * nt)(*toks)
assert llama.llama_decode(ctx, llama.llama_batch_get_one(batch_toks, nt)) == 0
out, gaps = [], []
for i in range(n):
    lg = llama.llama_get_logits_ith(ctx, -1)
    vals = lg[:nv]
    best = max(range(nv), key=vals.__getitem__)
    top = sorted(vals)[-2:]
    gaps.append(top[1] - top[0])
    out.append(best)
    one = (ctypes.c_int32 * 1)(best)
    assert llama.llama_decode(ctx, llama.llama_batch_get_one(one, 1)) == 0
mean = sum(vals)/nv
sd = statistics.pstdev(vals)
print("prompt", toks)
print("greedy", out)
print("distinct", len(set(out)), "of", n)
print("top2 gaps min %.3f max %.3f mean %.3f" % (min(gaps), max(gaps), sum(gaps)/n))
print("last logits mean %.3f std %.3f" % (mean, sd))
print("text", b"".join(llama.llama_vocab_get_text(voc, t) for t in out)[:200])
