package tokenizer_test

import (
	"fmt"

	"github.com/realizar-host/realizar-host/tokenizer"
)

// A tiny SentencePiece vocabulary built from plain values; FromGGUF fills
// the same Spec from a file.
func ExampleNew() {
	// SentencePiece merges pairs that form a token, best score first:
	// "H"+"i" → "Hi", then "▁"+"Hi" → "▁Hi".
	spec := tokenizer.NewSpec(tokenizer.ModelSPM, []string{"<unk>", "<s>", "</s>", "▁", "H", "i", "Hi", "▁Hi", "!"})
	spec.Types = []int32{2, 3, 3, 1, 1, 1, 1, 1, 1}
	spec.Scores = []float32{0, 0, 0, -1, -2, -2, -3, -4, -2}
	spec.BOS, spec.EOS = 1, 2
	tok, err := tokenizer.New(spec)
	if err != nil {
		fmt.Println(err)
		return
	}
	ids := tok.Encode("Hi!", tokenizer.EncodeOptions{AddSpecial: true})
	fmt.Println(ids, tok.IsEOG(2))
	fmt.Printf("%q\n", tok.Decode(ids[1:]))
	// Output:
	// [1 7 8] true
	// "Hi!"
}

// A Stream holds back the bytes of a character split across tokens.
func ExampleStream() {
	s := tokenizer.NewStream(nil)
	euro := []byte("€") // E2 82 AC
	fmt.Printf("%q\n", s.Write(euro[:1]))
	fmt.Printf("%q\n", s.Write(euro[1:2]))
	fmt.Printf("%q\n", s.Write(append(euro[2:], '!')))
	// Output:
	// ""
	// ""
	// "€!"
}

func ExampleRenderBuiltin() {
	prompt, _ := tokenizer.RenderBuiltin(tokenizer.FormatChatML, []tokenizer.Message{{Role: "user", Content: "Hi"}}, true)
	fmt.Printf("%q\n", prompt)
	// Output:
	// "<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n"
}
