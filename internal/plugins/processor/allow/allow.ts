// allow-as: the allow processor (ABI 2) built with the AssemblyScript SDK:
// the same config and masks as the C build (allow.c, whose comment is the
// specification). Built by plugins/build.sh into plugins/wasm/allow-as.wasm.

import {
  accepted_get, configBool, configCheckKeys, configError, configInt, configRaw, log, maskAllow, maskDeny,
  maskWords, packInitV2, token_attrs, ATTR_EOG, CONFIG_SET, ERR_CONFIG, ERR_FAILED, ERR_FEATURE, ERR_STATE,
  FEATURE_ACCEPTED, FEATURE_MASK, FEATURE_TOKEN_ATTRS, LOG_ERROR, OUTPUT_MASK,
} from "../../../../abi/guest/assemblyscript/realizar";

let nVocab: i32 = 0;
let words: i32 = 0;
let base: usize = 0; // built at init
let live: usize = 0; // base at each reset, minus what once denied
let once: bool = false;
let accepted: usize = 0;
let acceptedCap: i32 = 0;

export function realizar_abi_v2_processor(): void {}
export { realizar_alloc } from "../../../../abi/guest/assemblyscript/realizar";

export function realizar_init(n: i32, maxPiece: i32, configPtr: i32, configLen: i32, features: i64): i64 {
  const need: i64 = FEATURE_MASK | FEATURE_TOKEN_ATTRS | FEATURE_ACCEPTED;
  if ((features & need) != need) {
    log(LOG_ERROR, "the host lacks the mask, token_attrs or accepted feature");
    return ERR_FEATURE;
  }
  let r = configCheckKeys(configPtr, configLen, ["tokens", "eog", "once"]);
  if (r < 0) return r;
  nVocab = n;
  words = maskWords(n);
  base = heap.alloc(<usize>words << 2);
  live = heap.alloc(<usize>words << 2);
  memory.fill(base, 0, <usize>words << 2);
  const raw = configRaw("tokens");
  if (raw == null) return configError("tokens", "is required");
  if (!parseIDs(raw)) return configError("tokens", "must be an array of token ids in [0, n_vocab)");
  let eog = true;
  r = configBool("eog");
  if (r < 0) return r;
  if (r == CONFIG_SET) eog = configInt != 0;
  r = configBool("once");
  if (r < 0) return r;
  if (r == CONFIG_SET) once = configInt != 0;
  if (eog) {
    const attrs = heap.alloc(<usize>n << 2);
    if (token_attrs(0, attrs, n) != n) return ERR_FAILED;
    for (let id = 0; id < n; id++) {
      if ((load<u32>(attrs + (<usize>id << 2)) & ATTR_EOG) != 0) maskAllow(base, id);
    }
    heap.free(attrs);
  }
  return packInitV2(0, 0, OUTPUT_MASK);
}

// parseIDs sets the bit of each id of the compact JSON array raw in base.
function parseIDs(raw: Uint8Array): bool {
  const n = raw.length;
  if (n < 2 || raw[0] != 0x5b || raw[n - 1] != 0x5d) return false;
  if (n == 2) return true;
  let id: i64 = 0;
  let digits = 0;
  for (let i = 1; i < n; i++) {
    const c = <i32>raw[i];
    if (c == 0x2c || c == 0x5d) {
      if (digits == 0 || id >= <i64>nVocab) return false;
      maskAllow(base, <i32>id);
      id = 0;
      digits = 0;
      continue;
    }
    if (c < 0x30 || c > 0x39 || digits >= 10) return false;
    id = id * 10 + (c - 0x30);
    digits++;
  }
  return true;
}

export function realizar_reset(seed: i64, nPrompt: i32): i32 {
  if (live == 0) return ERR_STATE;
  memory.copy(live, base, <usize>words << 2);
  return 0;
}

export function realizar_process(nAccepted: i32, count: i32): i32 {
  if (live == 0) return ERR_STATE;
  if (once && nAccepted > 0) {
    if (nAccepted > acceptedCap) { // rare: more than ever before
      accepted = heap.alloc(<usize>nAccepted << 2);
      acceptedCap = nAccepted;
    }
    const got = accepted_get(accepted, acceptedCap);
    for (let k = 0; k < got && k < acceptedCap; k++) {
      const t = load<i32>(accepted + (<usize>k << 2));
      if (t >= 0 && t < nVocab) maskDeny(live, t);
    }
  }
  return <i32>live;
}
