package gguf

// Standard metadata key names, as the GGUF specification and llama.cpp name
// them. Keys of the form "<arch>.<suffix>" are built with ArchKey.
const (
	KeyArchitecture        = "general.architecture"         // string, "llama", "qwen2"
	KeyName                = "general.name"                 // string
	KeyFileType            = "general.file_type"            // uint32, llama.cpp's llama_ftype (0 all F32, 1 mostly F16, 15 Q4_K_M)
	KeyQuantizationVersion = "general.quantization_version" // uint32

	KeyTokenizerModel = "tokenizer.ggml.model"      // string, "llama" (SentencePiece), "gpt2" (byte-level BPE)
	KeyTokenizerPre   = "tokenizer.ggml.pre"        // string, pre-tokenizer name ("qwen2")
	KeyTokens         = "tokenizer.ggml.tokens"     // []string, the vocabulary by token id
	KeyTokenScores    = "tokenizer.ggml.scores"     // []float32, per token
	KeyTokenTypes     = "tokenizer.ggml.token_type" // []int32, per token (1 normal, 2 unknown, 3 control, 4 user-defined, 5 unused, 6 byte)
	KeyMerges         = "tokenizer.ggml.merges"     // []string, BPE merges "a b"
	KeyBOSTokenID     = "tokenizer.ggml.bos_token_id"
	KeyEOSTokenID     = "tokenizer.ggml.eos_token_id"
	KeyAddBOS         = "tokenizer.ggml.add_bos_token" // bool
	KeyChatTemplate   = "tokenizer.chat_template"      // string

	// TokenizerPrefix starts every tokenizer key.
	TokenizerPrefix = "tokenizer."
)

// Architecture-relative key suffixes, joined to the architecture name by
// ArchKey: ArchKey("llama", SuffixBlockCount) is "llama.block_count".
const (
	SuffixVocabSize         = "vocab_size"                       // uint32
	SuffixContextLength     = "context_length"                   // uint32, positions trained for
	SuffixEmbeddingLength   = "embedding_length"                 // uint32, n_embd
	SuffixBlockCount        = "block_count"                      // uint32, layers
	SuffixFeedForwardLength = "feed_forward_length"              // uint32, n_ff
	SuffixHeadCount         = "attention.head_count"             // uint32
	SuffixHeadCountKV       = "attention.head_count_kv"          // uint32
	SuffixRMSEpsilon        = "attention.layer_norm_rms_epsilon" // float32
	SuffixKeyLength         = "attention.key_length"             // uint32, head dim of K
	SuffixValueLength       = "attention.value_length"           // uint32, head dim of V
	SuffixRopeDimension     = "rope.dimension_count"             // uint32, rotated dims per head
	SuffixRopeFreqBase      = "rope.freq_base"                   // float32, theta

	SuffixRopeScalingType       = "rope.scaling.type"                    // string: "none", "linear", "yarn"
	SuffixRopeScalingFactor     = "rope.scaling.factor"                  // float32, context extension factor
	SuffixRopeScaleLinear       = "rope.scale_linear"                    // float32, the older spelling of a linear factor
	SuffixRopeScalingAttnFactor = "rope.scaling.attn_factor"             // float32, multiplies RoPE's cos and sin
	SuffixRopeScalingOrigCtx    = "rope.scaling.original_context_length" // uint32, YaRN's pre-extension context
	SuffixSlidingWindow         = "attention.sliding_window"             // uint32, positions a windowed layer attends to
	SuffixSlidingWindowPattern  = "attention.sliding_window_pattern"     // uint32 n (every n-th layer global) or one bool per layer
	SuffixRopeFreqBaseSWA       = "rope.freq_base_swa"                   // float32, theta of the sliding-window layers
	SuffixFinalLogitSoftcap     = "final_logit_softcapping"              // float32, logits become cap·tanh(logits/cap)
	SuffixKeyLengthSWA          = "attention.key_length_swa"             // uint32, K head dim of the sliding-window layers
	SuffixValueLengthSWA        = "attention.value_length_swa"           // uint32, V head dim of the sliding-window layers
	SuffixRopeDimensionSWA      = "rope.dimension_count_swa"             // uint32, rotated dims of the sliding-window layers

	SuffixExpertCount       = "expert_count"               // uint32, experts per MoE layer
	SuffixExpertUsedCount   = "expert_used_count"          // uint32, experts each token is routed to
	SuffixExpertFeedForward = "expert_feed_forward_length" // uint32, hidden width of one expert
)

// ArchKey returns the key "<arch>.<suffix>".
func ArchKey(arch, suffix string) string { return arch + "." + suffix }
