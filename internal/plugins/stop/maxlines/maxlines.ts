// max-lines: a stop policy that ends the turn at the lines-th newline of the
// generated text. AssemblyScript, on the SDK in abi/guest/assemblyscript;
// built by plugins/build.sh into plugins/wasm/max-lines.wasm.
//
// The rule: count the '\n' bytes of the turn's generated text. The token
// that brings the count to lines stops the turn, trimming what follows that
// newline in the token, and the newline too unless keep_newline:
//
//   token "ab\ncd", lines reached at its '\n':  keep_newline false: trim 3 ("\ncd")
//                                                keep_newline true:  trim 2 ("cd")
//   (a trim of 0 is answered as stop-keep)
//
// No hold-back is needed: a newline is one byte, never split across tokens.
//
// Config (JSON object; another key is refused, naming it):
//   lines         [1]     >= 1
//   keep_newline  [false] keep the last newline in the text

import {
  configBool, configCheckKeys, configI32, configError, configInt, packStop, CONFIG_SET,
  ERR_STATE, ERR_VOCAB, STOP_CONTINUE, STOP_KEEP, STOP_TRIM, packInit,
} from "../../../../abi/guest/assemblyscript/realizar";

let lines: i32 = 1;
let keepNewline: bool = false;
// The input region: the host writes each token's bytes here.
let piece: usize = 0;
let pieceCap: i32 = 0;
// Newlines seen in this turn.
let seen: i32 = 0;

export function realizar_abi_v1_stop(): void {}
export { realizar_alloc } from "../../../../abi/guest/assemblyscript/realizar";

export function realizar_init(nVocab: i32, maxPiece: i32, configPtr: i32, configLen: i32): i64 {
  if (nVocab <= 0 || maxPiece <= 0) return ERR_VOCAB;
  let r = configCheckKeys(configPtr, configLen, ["lines", "keep_newline"]);
  if (r < 0) return r;
  r = configI32("lines");
  if (r < 0) return r;
  if (r == CONFIG_SET) {
    if (configInt < 1) return configError("lines", "must be at least 1");
    lines = configInt;
  }
  r = configBool("keep_newline");
  if (r < 0) return r;
  if (r == CONFIG_SET) keepNewline = configInt != 0;
  piece = heap.alloc(<usize>maxPiece);
  pieceCap = maxPiece;
  return packInit(piece, 0);
}

export function realizar_reset(seed: i64, nPrompt: i32): i32 {
  if (piece == 0) return ERR_STATE;
  seen = 0;
  return 0;
}

export function realizar_check(token: i32, len: i32): i32 {
  if (piece == 0 || len < 0 || len > pieceCap) return ERR_STATE;
  for (let i = 0; i < len; i++) {
    if (load<u8>(piece + <usize>i) != 0x0a) continue;
    seen++;
    if (seen < lines) continue;
    const trim = keepNewline ? len - i - 1 : len - i;
    return trim == 0 ? packStop(STOP_KEEP, 0) : packStop(STOP_TRIM, trim);
  }
  return packStop(STOP_CONTINUE, 0);
}
