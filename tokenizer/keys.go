package tokenizer

import "github.com/realizar-host/realizar-host/gguf"

// GGUF metadata keys a Tokenizer reads. Those the gguf package names are
// taken from it; the rest are llama.cpp's names.
const (
	keyName           = gguf.KeyName
	keyModel          = gguf.KeyTokenizerModel
	keyPre            = gguf.KeyTokenizerPre
	keyTokens         = gguf.KeyTokens
	keyScores         = gguf.KeyTokenScores
	keyTypes          = gguf.KeyTokenTypes
	keyMerges         = gguf.KeyMerges
	keyChatTemplate   = gguf.KeyChatTemplate
	keyBOS            = gguf.KeyBOSTokenID
	keyEOS            = gguf.KeyEOSTokenID
	keyEOT            = "tokenizer.ggml.eot_token_id"
	keyEOM            = "tokenizer.ggml.eom_token_id"
	keyUNK            = "tokenizer.ggml.unknown_token_id"
	keyPAD            = "tokenizer.ggml.padding_token_id"
	keyFIMPre         = "tokenizer.ggml.fim_pre_token_id"
	keyFIMSuf         = "tokenizer.ggml.fim_suf_token_id"
	keyFIMMid         = "tokenizer.ggml.fim_mid_token_id"
	keyFIMPad         = "tokenizer.ggml.fim_pad_token_id"
	keyFIMRep         = "tokenizer.ggml.fim_rep_token_id"
	keyFIMSep         = "tokenizer.ggml.fim_sep_token_id"
	keyPrefixOld      = "tokenizer.ggml.prefix_token_id" // deprecated spelling of fim_pre
	keySuffixOld      = "tokenizer.ggml.suffix_token_id" // deprecated spelling of fim_suf
	keyMiddleOld      = "tokenizer.ggml.middle_token_id" // deprecated spelling of fim_mid
	keyAddBOS         = gguf.KeyAddBOS
	keyAddEOS         = "tokenizer.ggml.add_eos_token"
	keyAddSpacePrefix = "tokenizer.ggml.add_space_prefix"
)
