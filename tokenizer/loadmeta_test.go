package tokenizer

// openTestVocab builds a Tokenizer from a GGUF file through the test-only
// metadata loader (until the gguf package is merged).
func openTestVocab(path string) (*Tokenizer, error) {
	m, err := readTestMeta(path)
	if err != nil {
		return nil, err
	}
	strs := func(k string) []string {
		a, _ := m[k].([]any)
		out := make([]string, len(a))
		for i, v := range a {
			out[i] = v.(string)
		}
		return out
	}
	model, _ := m["tokenizer.ggml.model"].(string)
	spec := NewSpec(model, strs("tokenizer.ggml.tokens"))
	spec.Pre, _ = m["tokenizer.ggml.pre"].(string)
	spec.Merges = strs("tokenizer.ggml.merges")
	spec.ChatTemplate, _ = m["tokenizer.chat_template"].(string)
	if a, ok := m["tokenizer.ggml.scores"].([]any); ok {
		spec.Scores = make([]float32, len(a))
		for i, v := range a {
			spec.Scores[i] = v.(float32)
		}
	}
	if a, ok := m["tokenizer.ggml.token_type"].([]any); ok {
		spec.Types = make([]int32, len(a))
		for i, v := range a {
			spec.Types[i] = v.(int32)
		}
	}
	ids := map[string]*int32{
		"bos": &spec.BOS, "eos": &spec.EOS, "eot": &spec.EOT, "eom": &spec.EOM,
		"unknown": &spec.UNK, "padding": &spec.PAD,
	}
	for k, dst := range ids {
		if v, ok := m["tokenizer.ggml."+k+"_token_id"].(uint32); ok {
			*dst = int32(v)
		}
	}
	for k, dst := range map[string]**bool{"add_bos_token": &spec.AddBOS, "add_eos_token": &spec.AddEOS, "add_space_prefix": &spec.AddSpacePrefix} {
		if v, ok := m["tokenizer.ggml."+k].(bool); ok {
			*dst = &v
		}
	}
	return New(spec)
}
