//go:build wasip1

package main

import (
	"strings"

	"github.com/realizar-host/realizar-host/abi"
	"github.com/realizar-host/realizar-host/abi/guest"
	"github.com/realizar-host/realizar-host/internal/grammar"
)

var (
	g        *grammar.Grammar
	vocab    *grammar.Vocab
	matcher  *grammar.Matcher
	lazy     *grammar.Lazy     // with triggers: constrains from the first one on
	accept   func(int32) error // lazy.Accept with triggers, else matcher.Accept
	none     guest.Mask        // all zero: after a refused token
	failed   bool
	accepted []int32
	// maxTokens: the turn's budget (0: none), generated: the tokens
	// accepted since reset; budget: the vocabulary can honour it
	// (matcher.CanClose)
	maxTokens, generated int
	budget               bool
)

//go:wasmexport realizar_abi_v2_processor
func marker() {}

//go:wasmexport realizar_init
func initPlugin(n, maxPiece, configPtr, configLen int32, features int64) int64 {
	need := abi.FeatureMask | abi.FeatureTokenAttrs | abi.FeatureAccepted
	if abi.Feature(features)&need != need {
		guest.LogMsg(abi.LogError, "the host lacks the mask, token_attrs or accepted feature")
		return int64(abi.ErrFeature)
	}
	if err := guest.CheckKeys(configBytes(configLen), "grammar", "json_schema", "triggers", "max_tokens"); err != nil {
		guest.LogMsg(abi.LogError, guest.LastLine(err))
		return int64(abi.ErrConfig)
	}
	src, ok := guest.ConfigRaw("grammar")
	schema, hasSchema := guest.ConfigRaw("json_schema")
	if ok == hasSchema {
		guest.LogMsg(abi.LogError, "config: give exactly one of grammar and json_schema")
		return int64(abi.ErrConfig)
	}
	text, key := string(src), "grammar"
	// The key names the grammar package's errors, so their own "grammar: "
	// goes ("config: grammar: line 1, column 9: …", not "grammar: grammar:").
	refuse := func(err error) int64 {
		guest.LogMsg(abi.LogError, "config: "+key+": "+strings.TrimPrefix(err.Error(), "grammar: "))
		return int64(abi.ErrConfig)
	}
	if hasSchema {
		var err error
		key = "json_schema"
		if text, err = grammar.FromJSONSchema(schema); err != nil {
			return refuse(err)
		}
	}
	var err error
	if g, err = grammar.Compile(text); err != nil {
		return refuse(err)
	}
	attrs := make([]abi.TokenAttr, n)
	if guest.TokenAttrs(0, attrs) != int(n) {
		return int64(abi.ErrFailed)
	}
	pieces := make([][]byte, n)
	kinds := make([]grammar.TokenKind, n)
	buf := make([]byte, max(maxPiece, 1))
	for id := range n {
		k := guest.VocabPiece(id, buf)
		if k < 0 || k > len(buf) {
			return int64(abi.ErrVocab)
		}
		pieces[id] = append([]byte(nil), buf[:k]...)
		switch a := attrs[id]; {
		case a&abi.AttrEOG != 0:
			kinds[id] = grammar.TokenEOG
		case a&abi.AttrControl != 0:
			kinds[id] = grammar.TokenOther
		}
	}
	if vocab, err = grammar.NewVocab(pieces, kinds); err != nil {
		guest.LogMsg(abi.LogError, err.Error())
		return int64(abi.ErrVocab)
	}
	matcher = grammar.NewMatcher(g, vocab)
	accept = matcher.Accept
	if triggers, ok, err := guest.ConfigStrings("triggers"); err != nil {
		guest.LogMsg(abi.LogError, "config: triggers: "+err.Error())
		return int64(abi.ErrConfig)
	} else if ok {
		if lazy, err = grammar.NewLazy(matcher, triggers); err != nil {
			guest.LogMsg(abi.LogError, "config: "+err.Error())
			return int64(abi.ErrConfig)
		}
		accept = lazy.Accept
	}
	if _, err := guest.ConfigInt("max_tokens", &maxTokens); err != nil || maxTokens < 0 {
		guest.LogMsg(abi.LogError, "config: max_tokens must be a count of tokens, 0 for none")
		return int64(abi.ErrConfig)
	}
	if budget = maxTokens > 0 && matcher.CanClose(); maxTokens > 0 && !budget {
		guest.LogMsg(abi.LogWarn, "max_tokens: the vocabulary lacks a single-byte token for some terminal of the grammar; a turn cut by the budget may end incomplete")
	}
	none = guest.NewMask(int(n))
	return abi.PackInitV2(0, 0, abi.OutputMask)
}

//go:wasmexport realizar_reset
func reset(seed int64, nPrompt int32) int32 {
	matcher.Reset() // keeps the memo tables and cached masks
	if lazy != nil {
		lazy.Reset()
	}
	failed, generated = false, 0
	return 0
}

//go:wasmexport realizar_process
func process(nAccepted, count int32) int32 {
	if nAccepted > 0 {
		accepted = guest.Accepted(accepted, nAccepted)
		generated += len(accepted)
		for _, t := range accepted {
			if failed {
				break
			}
			if accept(t) != nil {
				failed = true
				guest.LogMsg(abi.LogWarn, "the grammar refuses an accepted token (its mask allowed it, or the host sampled without the mask); no token is allowed now")
			}
		}
	}
	if failed {
		return guest.MaskAddress(none)
	}
	if lazy != nil && !lazy.Triggered() {
		return 0 // no trigger yet: no constraint
	}
	if !budget {
		return guest.MaskAddress(guest.Mask(matcher.Mask()))
	}
	// the tokens after this one, less the last, kept for end of
	// generation: within them the grammar must end, so that a turn at
	// its budget ends by end of generation (finish_reason "stop", which
	// clients parse; "length" they take for a truncated value)
	left := maxTokens - generated - 2
	if generated == 0 && matcher.Shortest() > left+1 {
		guest.LogMsg(abi.LogWarn, "max_tokens: the shortest completion of the grammar and end of generation do not fit the budget; the turn may end incomplete")
	}
	return guest.MaskAddress(guest.Mask(matcher.MaskWithin(left)))
}

// config holds the raw config the host writes through realizar_alloc
// before realizar_init.
var config []byte

//go:wasmexport realizar_alloc
func alloc(size int32) int32 {
	config = make([]byte, max(size, 1))
	return int32(guest.Address(&config[0]))
}

// configBytes is the raw config of length n that realizar_init received.
func configBytes(n int32) []byte {
	if n <= 0 || int(n) > len(config) {
		return nil
	}
	return config[:n]
}

func main() {}
