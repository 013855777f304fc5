package model

// GGUF metadata keys and tensor names this package reads. Every name the
// package looks up is in this file.
//
// Keys starting with "." are per architecture: the full key is the
// architecture name followed by the suffix ("llama.block_count").
const (
	keyArchitecture = "general.architecture"
	keyTokens       = "tokenizer.ggml.tokens"

	keyContextLength = ".context_length"
	keyEmbeddingLen  = ".embedding_length"
	keyBlockCount    = ".block_count"
	keyFFNLength     = ".feed_forward_length"
	keyHeadCount     = ".attention.head_count"
	keyHeadCountKV   = ".attention.head_count_kv"
	keyKeyLength     = ".attention.key_length"
	keyValueLength   = ".attention.value_length"
	keyRMSEps        = ".attention.layer_norm_rms_epsilon"
	keyVocabSize     = ".vocab_size"
	keyRopeDims      = ".rope.dimension_count"
	keyRopeFreqBase  = ".rope.freq_base"
	keyRopeScaling   = ".rope.scaling.type"
	keyRopeFactor    = ".rope.scaling.factor"
	keyRopeScaleLin  = ".rope.scale_linear"
	keyRopeAttnFact  = ".rope.scaling.attn_factor"
	keyRopeOrigCtx   = ".rope.scaling.original_context_length"

	keySlidingWindow = ".attention.sliding_window"

	// gemma3: which layers slide (a count n: layer l slides unless l%n ==
	// n-1; or one bool per layer), their RoPE base, the logit softcap, and
	// the per-kind head shapes llama.cpp reads for every architecture.
	keySlidingPattern = ".attention.sliding_window_pattern"
	keyRopeBaseSWA    = ".rope.freq_base_swa"
	keyLogitSoftcap   = ".final_logit_softcapping"
	keyKeyLengthSWA   = ".attention.key_length_swa"
	keyValueLengthSWA = ".attention.value_length_swa"
	keyRopeDimsSWA    = ".rope.dimension_count_swa"

	keyExpertCount     = ".expert_count"
	keyExpertUsedCount = ".expert_used_count"
	keyExpertFFNLength = ".expert_feed_forward_length"
)

// Tensor names. Per-layer names are formatted with the layer index.
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
