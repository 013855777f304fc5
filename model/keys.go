package model

// Tensor names this package reads; every tensor name the package looks up
// is in this file. Per-layer names are formatted with the layer index. The
// metadata keys are gguf's (gguf.KeyArchitecture, and the
// per-architecture suffixes joined by gguf.ArchKey).
const (
	tensorTokenEmbd  = "token_embd.weight"
	tensorOutputNorm = "output_norm.weight"
	tensorOutput     = "output.weight"
	tensorOutputBias = "output.bias"
	tensorRopeFreqs  = "rope_freqs.weight"
	// LongRoPE (phi3): the divisors of each pair's angle for contexts past
	// rope.scaling.original_context_length, and for those within it.
	tensorRopeLong  = "rope_factors_long.weight"
	tensorRopeShort = "rope_factors_short.weight"

	tensorAttnNorm = "blk.%d.attn_norm.weight"
	tensorAttnQKV  = "blk.%d.attn_qkv.weight" // phi3: Q, K and V rows in that order
	tensorAttnQKVB = "blk.%d.attn_qkv.bias"
	tensorAttnQ    = "blk.%d.attn_q.weight"
	tensorAttnK    = "blk.%d.attn_k.weight"
	tensorAttnV    = "blk.%d.attn_v.weight"
	tensorAttnQB   = "blk.%d.attn_q.bias"
	tensorAttnKB   = "blk.%d.attn_k.bias"
	tensorAttnVB   = "blk.%d.attn_v.bias"
	tensorAttnQN   = "blk.%d.attn_q_norm.weight"
	tensorAttnKN   = "blk.%d.attn_k_norm.weight"
	tensorAttnOut  = "blk.%d.attn_output.weight"
	tensorAttnOutB = "blk.%d.attn_output.bias"
	tensorFFNNorm  = "blk.%d.ffn_norm.weight"
	// gemma3: the RMSNorm gains of each sublayer's output, before the
	// residual add.
	tensorAttnPostNorm = "blk.%d.post_attention_norm.weight"
	tensorFFNPostNorm  = "blk.%d.post_ffw_norm.weight"
	tensorFFNGate      = "blk.%d.ffn_gate.weight"
	tensorFFNUp        = "blk.%d.ffn_up.weight"
	tensorFFNDown      = "blk.%d.ffn_down.weight"
	tensorFFNGateB     = "blk.%d.ffn_gate.bias"
	tensorFFNUpB       = "blk.%d.ffn_up.bias"
	tensorFFNDownB     = "blk.%d.ffn_down.bias"

	// Mixture of experts: the router and the merged expert tensors
	// ([n_embd, n_expert]; [n_embd, n_ff_exp, n_expert] for gate and up,
	// [n_ff_exp, n_embd, n_expert] for down, ggml order).
	tensorFFNGateInp  = "blk.%d.ffn_gate_inp.weight"
	tensorFFNGateExps = "blk.%d.ffn_gate_exps.weight"
	tensorFFNUpExps   = "blk.%d.ffn_up_exps.weight"
	tensorFFNDownExps = "blk.%d.ffn_down_exps.weight"
)
