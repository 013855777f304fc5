// realizar: the AssemblyScript guest SDK for the realizar-host plugin ABI,
// versions 1 and 2 (abi/ABI.md; version 2 is §11). Import it from a policy's entry file:
//
//   import { packStop, STOP_CONTINUE, configI32 } from "../../../abi/guest/assemblyscript/realizar";
//
// and build with the pinned compiler (package.json here; scripts/guests-install.sh
// installs it into .cache/asc):
//
//   asc policy.ts --runtime stub --use abort= -O2 -o policy.wasm
//
// --runtime stub: a bump allocator and no garbage collector (a policy
// allocates at realizar_init and never frees), which leaves no runtime
// exports; --use abort= (empty): a failed assertion or bounds check traps
// (the host reports ErrPluginTrap) instead of calling an imported env.abort,
// an import the host refuses.
//
// It carries the contract's constants, realizar_init's and realizar_check's
// packing, the host imports of §7, and config readers. It has no RNG, Exp or
// softmax yet (the C, Go and Rust SDKs do): a sampler in AssemblyScript must
// port §9 and reproduce abi/testdata/determinism.json first.

// The ABI version this SDK implements (abi.Version).
export const ABI_VERSION: i32 = 1;
// The largest top_n realizar_init may ask for (abi.MaxTopN).
export const MAX_TOP_N: i32 = 4096;
// The largest hold-back or trim a stop policy may answer, 2^29 - 1 (abi.MaxStopN).
export const MAX_STOP_N: i32 = 536870911;

// Negative results of realizar_init, realizar_reset, realizar_process and
// realizar_check (abi.ErrCode, ABI §10).
export const ERR_FAILED: i32 = -1;
export const ERR_CONFIG: i32 = -2;
export const ERR_VOCAB: i32 = -3;
export const ERR_STATE: i32 = -4;
// ABI 2: the host did not announce a feature the policy needs.
export const ERR_FEATURE: i32 = -5;

// Stop actions (abi.StopAction): go on holding back n bytes; stop and keep
// the text (n = 0); stop and remove the last n bytes.
export const STOP_CONTINUE: i32 = 0;
export const STOP_KEEP: i32 = 1;
export const STOP_TRIM: i32 = 2;

// Log levels of the log host function (abi.LogDebug..abi.LogError).
export const LOG_DEBUG: i32 = 0;
export const LOG_INFO: i32 = 1;
export const LOG_WARN: i32 = 2;
export const LOG_ERROR: i32 = 3;

// realizar_init's answer (abi.PackInit): the input region's address in bits
// 0-31, top_n (0 = full logits, 1..MAX_TOP_N candidates) in bits 32-44.
export function packInit(addr: usize, topN: i32): i64 {
  return (<i64>(<u32>addr)) | ((<i64>(topN & 0x1fff)) << 32);
}

// realizar_check's answer (abi.PackStop): n << 2 | action.
export function packStop(action: i32, n: i32): i32 {
  return (n << 2) | action;
}

// ---- ABI 2 (§11) ----
// realizar_init gains a fifth argument, the host's features:
//   export function realizar_init(nVocab: i32, maxPiece: i32, configPtr: i32,
//                                 configLen: i32, features: i64): i64
// and realizar_sample / realizar_process receive (nAccepted, count).

// ABI version 2 (abi.Version2); the marker export is realizar_abi_v2_<kind>.
export const ABI_VERSION2: i32 = 2;
// Feature bits the host announces (abi.Feature).
export const FEATURE_MASK: i32 = 1;
export const FEATURE_TOKEN_ATTRS: i32 = 2;
export const FEATURE_ACCEPTED: i32 = 4;
// A processor's output mode (abi.Output): v1's edits, or the allowed-token
// mask returned by address from realizar_process.
export const OUTPUT_EDITS: i32 = 0;
export const OUTPUT_MASK: i32 = 1;
// Token attribute flags (abi.TokenAttr); the piece length is bits 8..31.
export const ATTR_EOG: i32 = 1;
export const ATTR_CONTROL: i32 = 2;
export const ATTR_BYTE: i32 = 4;

// A v2 realizar_init answer (abi.PackInitV2); a mask-mode processor answers
// packInitV2(0, 0, OUTPUT_MASK).
export function packInitV2(addr: usize, topN: i32, output: i32): i64 {
  return packInit(addr, topN) | ((<i64>(output & 3)) << 45);
}

// The piece length carried by a token attribute word.
export function attrPieceLen(attr: u32): i32 {
  return <i32>(attr >> 8);
}

// Words of an allowed-token mask over nVocab tokens (abi.MaskWords); bit
// id%32 of word id/32 allows token id.
export function maskWords(nVocab: i32): i32 {
  return (nVocab + 31) >>> 5;
}

// Sets token id's bit in the mask at address mask.
export function maskAllow(mask: usize, id: i32): void {
  const p = mask + (<usize>(id >>> 5) << 2);
  store<u32>(p, load<u32>(p) | (<u32>1 << (id & 31)));
}

// Clears token id's bit.
export function maskDeny(mask: usize, id: i32): void {
  const p = mask + (<usize>(id >>> 5) << 2);
  store<u32>(p, load<u32>(p) & ~(<u32>1 << (id & 31)));
}

// Whether token id's bit is set.
export function maskAllows(mask: usize, id: i32): bool {
  return ((load<u32>(mask + (<usize>(id >>> 5) << 2)) >>> (id & 31)) & 1) != 0;
}

// ---- §7 host functions, module "realizar" ----

// Copies top-level config key's value into buf (a string decoded, anything
// else as compact JSON); its true length, or -1 if absent.
@external("realizar", "config_get")
export declare function config_get(key: usize, keyLen: i32, buf: usize, limit: i32): i32;
// n_vocab.
@external("realizar", "vocab_size")
export declare function vocab_size(): i32;
// Copies token id's bytes into buf; the true length, or -1 for an id out of range.
@external("realizar", "vocab_piece")
export declare function vocab_piece(id: i32, buf: usize, limit: i32): i32;
// Copies the prompt's tokens (i32) during realizar_reset; their number.
@external("realizar", "prompt_get")
export declare function prompt_get(buf: usize, limit: i32): i32;
// Appends "[level] msg" to the instance's log.
@external("realizar", "log")
export declare function log_bytes(level: i32, msg: usize, len: i32): void;
// Monotonic nanoseconds since the instance was created.
@external("realizar", "clock_ns")
export declare function clock_ns(): i64;
// ABI 2: writes the attribute words (u32) of ids first.. into buf and
// returns their number, min(count, n_vocab-first); -1 for first out of range.
@external("realizar", "token_attrs")
export declare function token_attrs(first: i32, buf: usize, count: i32): i32;
// ABI 2: during a step call, copies the tokens (i32) accepted since the
// previous one; their number.
@external("realizar", "accepted_get")
export declare function accepted_get(buf: usize, limit: i32): i32;

// Appends msg (UTF-8) to the instance's log at level.
export function log(level: i32, msg: string): void {
  const b = String.UTF8.encode(msg);
  log_bytes(level, changetype<usize>(b), b.byteLength);
}

// ---- config readers (through config_get) ----

// Config readers answer one of these, or a value.
export const CONFIG_ABSENT: i32 = 0;
export const CONFIG_SET: i32 = 1;

// The last value a config reader found (configI32, configBool).
export let configInt: i32 = 0;

// Reads key's raw value into a fresh buffer: its bytes, or null when absent.
export function configRaw(key: string): Uint8Array | null {
  const k = String.UTF8.encode(key);
  let buf = new Uint8Array(64);
  let n = config_get(changetype<usize>(k), k.byteLength, buf.dataStart, buf.length);
  if (n < 0) return null;
  if (n > buf.length) {
    buf = new Uint8Array(n);
    n = config_get(changetype<usize>(k), k.byteLength, buf.dataStart, buf.length);
  }
  return buf.subarray(0, n);
}

// Config key as an i32 into configInt: CONFIG_SET, CONFIG_ABSENT (configInt
// unchanged), or ERR_CONFIG (logged, naming key) when it is not an integer
// in i32's range.
export function configI32(key: string): i32 {
  const v = configRaw(key);
  if (v == null) return CONFIG_ABSENT;
  const n = v.length;
  let i = 0;
  let neg = false;
  if (n > 0 && v[0] == 0x2d) { neg = true; i = 1; }
  if (i == n) return configError(key, "must be an integer");
  let x: i64 = 0;
  for (; i < n; i++) {
    const c = <i32>v[i];
    if (c < 0x30 || c > 0x39 || x > 0x80000000) return configError(key, "must be an integer");
    x = x * 10 + (c - 0x30);
  }
  if (neg) x = -x;
  if (x < i32.MIN_VALUE || x > i32.MAX_VALUE) return configError(key, "must be an integer");
  configInt = <i32>x;
  return CONFIG_SET;
}

// Config key as a bool into configInt (0 or 1): CONFIG_SET, CONFIG_ABSENT,
// or ERR_CONFIG (logged) when it is neither true nor false.
export function configBool(key: string): i32 {
  const v = configRaw(key);
  if (v == null) return CONFIG_ABSENT;
  const s = String.UTF8.decode(v.buffer.slice(v.byteOffset, v.byteOffset + v.length));
  if (s == "true") { configInt = 1; return CONFIG_SET; }
  if (s == "false") { configInt = 0; return CONFIG_SET; }
  return configError(key, "must be true or false");
}

// The optional realizar_alloc export (ABI §4.1), so that realizar_init
// receives the config's JSON text for configCheckKeys. A policy re-exports
// it from its entry file:
//   export { realizar_alloc } from "../../../abi/guest/assemblyscript/realizar";
export function realizar_alloc(size: i32): i32 {
  const n: usize = size > 0 ? <usize>size : 1;
  return <i32>heap.alloc(n);
}

// Refuses a config with a top-level key not in known: configPtr and
// configLen are realizar_init's (the config's JSON text; 0, 0 when there is
// none). Returns 0, or ERR_CONFIG after logging "config: unknown key KEY
// (the keys are A, B)", the line of the C, Go and Rust SDKs. The host has
// already checked that the config is a valid JSON object, so the scanner
// only finds the keys' boundaries (a key is compared as written, escapes
// and all).
export function configCheckKeys(configPtr: i32, configLen: i32, known: string[]): i32 {
  if (configLen <= 0) return 0;
  const s = <usize>configPtr;
  const n = configLen;
  let i = skipWs(s, n, 0);
  if (i >= n || load<u8>(s + i) != 0x7b) return configError("", "is not a JSON object");
  i = skipWs(s, n, i + 1);
  while (i < n && load<u8>(s + i) == 0x22) {
    const end = skipValue(s, n, i);
    const key = String.UTF8.decodeUnsafe(s + i + 1, <usize>(end - i - 2));
    if (!known.includes(key)) {
      log(LOG_ERROR, "config: unknown key " + key + " (the keys are " + known.join(", ") + ")");
      return ERR_CONFIG;
    }
    i = skipWs(s, n, end);
    i = skipWs(s, n, i + 1); // the colon
    i = skipWs(s, n, skipValue(s, n, i));
    if (i < n && load<u8>(s + i) == 0x2c) i = skipWs(s, n, i + 1);
  }
  return 0;
}

function skipWs(s: usize, n: i32, i: i32): i32 {
  while (i < n) {
    const c = load<u8>(s + i);
    if (c != 0x20 && c != 0x09 && c != 0x0a && c != 0x0d) break;
    i++;
  }
  return i;
}

// The index after the JSON value that starts at i.
function skipValue(s: usize, n: i32, i: i32): i32 {
  let depth = 0;
  let inString = false;
  for (; i < n; i++) {
    const c = load<u8>(s + i);
    if (inString) {
      if (c == 0x5c) i++;
      else if (c == 0x22) { inString = false; if (depth == 0) return i + 1; }
      continue;
    }
    if (c == 0x22) inString = true;
    else if (c == 0x7b || c == 0x5b) depth++;
    else if (c == 0x7d || c == 0x5d) {
      if (depth == 0) return i; // the end of the enclosing object
      depth--;
      if (depth == 0) return i + 1;
    } else if (depth == 0 && (c == 0x2c || c == 0x20 || c == 0x09 || c == 0x0a || c == 0x0d)) return i;
  }
  return n;
}

// Logs "config: KEY WHAT" as an error and returns ERR_CONFIG.
export function configError(key: string, what: string): i32 {
  log(LOG_ERROR, "config: " + key + " " + what);
  return ERR_CONFIG;
}
