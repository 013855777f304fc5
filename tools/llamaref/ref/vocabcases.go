package ref

import (
	"fmt"
	"os"
	"strconv"
	"strings"
)

// VocabCase is one tokenizer test vector of llama.cpp: Text encoded with
// add_special = false and parse_special = false gives IDs.
type VocabCase struct {
	Text string
	IDs  []int32
}

// ReadVocabCases reads llama.cpp's tokenizer vectors for the vocabulary GGUF
// at vocabPath: vocabPath+".inp" (texts separated by a line
// "__ggml_vocab_test__") and vocabPath+".out" (one line of space-separated
// ids per text), in file order. It errors when a file is missing, an id does
// not parse, or the counts differ.
func ReadVocabCases(vocabPath string) ([]VocabCase, error) {
	inp, err := os.ReadFile(vocabPath + ".inp")
	if err != nil {
		return nil, err
	}
	out, err := os.ReadFile(vocabPath + ".out")
	if err != nil {
		return nil, err
	}
	texts := strings.Split(string(inp), "\n__ggml_vocab_test__\n")
	if len(texts) > 0 && texts[len(texts)-1] == "" {
		texts = texts[:len(texts)-1]
	}
	lines := strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")
	if len(texts) != len(lines) {
		return nil, fmt.Errorf("%s: %d texts but %d id lines", vocabPath, len(texts), len(lines))
	}
	cases := make([]VocabCase, len(texts))
	for i, text := range texts {
		fields := strings.Fields(lines[i])
		ids := make([]int32, len(fields))
		for j, f := range fields {
			v, err := strconv.ParseInt(f, 10, 32)
			if err != nil {
				return nil, fmt.Errorf("%s.out line %d: %w", vocabPath, i+1, err)
			}
			ids[j] = int32(v)
		}
		cases[i] = VocabCase{Text: text, IDs: ids}
	}
	return cases, nil
}
