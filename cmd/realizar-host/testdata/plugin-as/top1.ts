// The host writes the top candidate here each step: its id, then its logit.
const region = memory.data(8);

export function realizar_abi_v1_sampler(): void {}

export function realizar_init(nVocab: i32, maxPiece: i32, configPtr: i32, configLen: i32): i64 {
  if (nVocab <= 0) return -3; // vocab error
  return <i64>region | (<i64>1 << 32); // address, top_n = 1
}

export function realizar_reset(seed: i64, nPrompt: i32): i32 {
  return 0;
}

export function realizar_sample(prev: i32, count: i32): i32 {
  return count > 0 ? load<i32>(region) : -1;
}
