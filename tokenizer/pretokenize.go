package tokenizer

// This file holds the pre-tokenizers of byte-level BPE vocabularies: they
// split text into words before merging. Each reproduces one tokenizer.json
// regular expression as llama.cpp evaluates it:
//
//	gpt-2:     's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
//	llama-bpe: (?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+
//	qwen2:     the llama-bpe expression with \p{N} in place of \p{N}{1,3}
//	qwen35:    qwen2 with [\p{L}\p{M}]+ for letters and \p{M} excluded from symbols
//
// Go's regexp (RE2) has no lookahead, so each is a hand-written scanner over
// code points; TestVectors proves them equal on llama.cpp's vectors.

// preKind names a pre-tokenizer.
type preKind uint8

const (
	preNone   preKind = iota // SentencePiece: no pre-tokenizer
	preGPT2                  // gpt-2 and aliases
	preLlama3                // llama-bpe and aliases: digits in runs of up to 3
	preQwen2                 // qwen2 and aliases: one digit per word
	preQwen35                // qwen35: qwen2 with combining marks joining letters
)

// preInfo is what a tokenizer.ggml.pre value selects: the splitter, and
// whether (as llama.cpp decides for the Llama 3 family) a word that is
// itself a token skips merging and BOS is added by default.
type preInfo struct {
	kind         preKind
	ignoreMerges bool
	addBOS       bool
}

// preInfos maps the tokenizer.ggml.pre values of byte-level BPE
// vocabularies this package implements, with the aliases llama.cpp
// accepts for the same expression.
var preInfos = func() map[string]preInfo {
	m := map[string]preInfo{}
	for _, n := range []string{"gpt-2", "phi-2", "jina-es", "jina-de", "gigachat", "jina-v2-es", "jina-v2-de",
		"a.x-4.0", "mellum", "modern-bert", "exaone4", "mpt", "olmo", "jais", "trillion", "granite-docling"} {
		m[n] = preInfo{kind: preGPT2}
	}
	for _, n := range []string{"llama3", "llama-v3", "llama-bpe", "falcon3", "falcon-h1", "pixtral", "midm-2.0", "lfm2", "jina-v5-nano"} {
		m[n] = preInfo{kind: preLlama3, ignoreMerges: true, addBOS: true}
	}
	for _, n := range []string{"dbrx", "smaug-bpe", "glm4", "chatglm-bpe"} {
		m[n] = preInfo{kind: preLlama3}
	}
	for _, n := range []string{"qwen2", "deepseek-r1-qwen", "kormo", "f2llmv2", "megrez", "stablelm2", "hunyuan", "solar-open", "grok-2"} {
		m[n] = preInfo{kind: preQwen2}
	}
	m["qwen35"] = preInfo{kind: preQwen35}
	return m
}()

// splitter holds one text's code points and classes; split returns word
// boundaries as code-point end indices.
type splitter struct {
	cps   []rune
	class []cpClass
	ends  []int
}

// reset decodes text into code points (invalid bytes become U+FFFD) and
// classifies them; combining marks are a class of their own only when
// marks is set (qwen35), else they are classOther.
func (s *splitter) reset(text string, marks bool) {
	s.cps = s.cps[:0]
	s.class = s.class[:0]
	s.ends = s.ends[:0]
	for i := 0; i < len(text); {
		r, n := decodeRune(text[i:])
		c := classOf(r)
		if c == classMark && !marks {
			c = classOther
		}
		s.cps = append(s.cps, r)
		s.class = append(s.class, c)
		i += n
	}
}

func (s *splitter) cls(i int) cpClass {
	if i < len(s.cps) {
		return s.class[i]
	}
	return classNone
}

func (s *splitter) cp(i int) rune {
	if i < len(s.cps) {
		return s.cps[i]
	}
	return -1
}

// emit closes a word at end if it is not empty.
func (s *splitter) emit(end int) {
	if n := len(s.ends); (n == 0 && end > 0) || (n > 0 && end > s.ends[n-1]) {
		s.ends = append(s.ends, end)
	}
}

func lowerASCII(r rune) rune {
	if r >= 'A' && r <= 'Z' {
		return r + 'a' - 'A'
	}
	return r
}

// contraction returns the length (2 or 3) of an English contraction
// starting at i ('s 't 'm 'd 're 've 'll), or 0.
func (s *splitter) contraction(i int, foldCase bool) int {
	if s.cp(i) != '\'' || i+1 >= len(s.cps) {
		return 0
	}
	a, b := s.cp(i+1), s.cp(i+2)
	if foldCase {
		a, b = lowerASCII(a), lowerASCII(b)
	}
	switch a {
	case 's', 't', 'm', 'd':
		return 2
	}
	if i+2 < len(s.cps) && ((a == 'r' && b == 'e') || (a == 'v' && b == 'e') || (a == 'l' && b == 'l')) {
		return 3
	}
	return 0
}

// spaceRun handles the whitespace alternatives at i: it returns the end of
// the word, given the run's length and (for llama-bpe and qwen2) the end of
// its last \r or \n.
func (s *splitter) spaceRun(i int, newlines bool) int {
	n, lastNL := 0, -1
	for s.cls(i+n) == classSpace {
		if c := s.cps[i+n]; newlines && (c == '\r' || c == '\n') {
			lastNL = i + n + 1
		}
		n++
	}
	switch {
	case lastNL >= 0: // \s*[\r\n]+
		return lastNL
	case n > 1 && i+n < len(s.cps): // \s+(?!\S): leave the last space to the next word
		return i + n - 1
	case n > 0: // \s+
		return i + n
	}
	return i + 1
}

func (s *splitter) splitGPT2() {
	for i := 0; i < len(s.cps); {
		if n := s.contraction(i, false); n > 0 {
			i += n
			s.emit(i)
			continue
		}
		c := s.cps[i]
		next := s.class[i]
		if c == ' ' {
			next = s.cls(i + 1)
		}
		if next == classLetter || next == classNumber || next == classOther {
			if c == ' ' {
				i++
			}
			for s.cls(i) == next {
				i++
			}
			s.emit(i)
			continue
		}
		i = s.spaceRun(i, false)
		s.emit(i)
	}
}

// splitLlama3 implements llama-bpe (maxDigits 3) and qwen2 (maxDigits 1);
// qwen35 is qwen2 run over text classified with marks, which join letters.
func (s *splitter) splitLlama3(maxDigits int) {
	letter := func(c cpClass) bool { return c == classLetter || c == classMark }
	for i := 0; i < len(s.cps); {
		if n := s.contraction(i, true); n > 0 {
			i += n
			s.emit(i)
			continue
		}
		c, cl := s.cps[i], s.class[i]
		// [^\r\n\p{L}\p{N}]?\p{L}+
		if c != '\r' && c != '\n' && cl != classNumber && (letter(cl) || letter(s.cls(i+1))) {
			i++
			for letter(s.cls(i)) {
				i++
			}
			s.emit(i)
			continue
		}
		// \p{N}{1,maxDigits}
		if cl == classNumber {
			start := i
			for s.cls(i) == classNumber {
				i++
				if i-start == maxDigits {
					s.emit(i)
					start = i
				}
			}
			s.emit(i)
			continue
		}
		//  ?[^\s\p{L}\p{N}]+[\r\n]*
		next := cl
		if c == ' ' {
			next = s.cls(i + 1)
		}
		if next == classOther || (c == ' ' && next == classNone) {
			if c == ' ' {
				i++
			}
			for s.cls(i) == classOther {
				i++
			}
			for r := s.cp(i); r == '\r' || r == '\n'; r = s.cp(i) {
				i++
			}
			s.emit(i)
			continue
		}
		i = s.spaceRun(i, true)
		s.emit(i)
	}
}

// split fills s.ends for the pre-tokenizer p.
func (s *splitter) split(p preKind) {
	switch p {
	case preGPT2:
		s.splitGPT2()
	case preLlama3:
		s.splitLlama3(3)
	case preQwen2, preQwen35:
		s.splitLlama3(1)
	default:
		s.emit(len(s.cps))
	}
}
