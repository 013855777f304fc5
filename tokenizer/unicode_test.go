package tokenizer

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

// lenientUTF8 re-encodes s the way byte-level BPE sees it: decoded by
// decodeRune, re-encoded by appendRune.
func lenientUTF8(s string) string {
	var b []byte
	for i := 0; i < len(s); {
		r, n := decodeRune(s[i:])
		b = appendRune(b, r)
		i += n
	}
	return string(b)
}

// TestDecodeRune pins llama.cpp's lenient UTF-8 decoding, checked against
// llama_tokenize on the gpt-2 vocabulary: overlong forms decode to their
// code point ("\xc1\x96" is token "V"), surrogates survive, bytes that
// start no sequence become U+FFFD one at a time. Past U+10FFFF llama.cpp
// aborts; this package yields U+FFFD instead.
//
// The overlong case was found by `go test -fuzz FuzzEncode ./tokenizer/`;
// its input is kept as testdata/fuzz/FuzzEncode/overlong-c1-96.
func TestDecodeRune(t *testing.T) {
	cases := []struct {
		in   string
		r    rune
		size int
	}{
		{"a", 'a', 1},
		{"é", 'é', 2},
		{"€", '€', 3},
		{"\U0001F680", 0x1F680, 4},
		{"\xc1\x96", 'V', 2},
		{"\xed\xa0\x80", 0xD800, 3},
		{"\x80", 0xFFFD, 1},
		{"\xff", 0xFFFD, 1},
		{"\xf8\x80\x80\x80", 0xFFFD, 1},
		{"\xe2\x82", 0xFFFD, 1},
		{"\xe2\x82x", 0xFFFD, 1},
		{"\xf4\x90\x80\x80", 0xFFFD, 4},
	}
	for _, c := range cases {
		r, n := decodeRune(c.in)
		assert.Equal(t, c.r, r, "%q", c.in)
		assert.Equal(t, c.size, n, "%q", c.in)
	}
	assert.Equal(t, "\xed\xa0\x80", string(appendRune(nil, 0xD800)))
}

func TestClassOf(t *testing.T) {
	cases := map[rune]cpClass{
		'a': classLetter, 'Я': classLetter, '世': classLetter, 0x2EBF0: classLetter, // CJK Ext. I (Unicode 15.1)
		'7': classNumber, '٣': classNumber, 'Ⅻ': classNumber,
		' ': classSpace, '\n': classSpace, 0x85: classSpace, 0xA0: classSpace, 0x3000: classSpace,
		0x1C: classOther, '!': classOther, 0x0301: classMark, 0x1F600: classOther, 0x0378: classOther,
	}
	for r, want := range cases {
		assert.Equal(t, want, classOf(r), "%U", r)
	}
	assert.True(t, strings.HasPrefix(lenientUTF8("\xc1\x96"), "V"))
}

// TestQueueKeys: merge priority keys sort as llama.cpp's queues do.
func TestQueueKeys(t *testing.T) {
	assert.Less(t, rankKey(1, 9), rankKey(2, 0), "lower rank first")
	assert.Less(t, rankKey(3, 1), rankKey(3, 2), "then leftmost")
	scores := []float32{10, 1.5, 0, -0.5, -3, -1e9}
	for i := 1; i < len(scores); i++ {
		assert.Less(t, scoreKey(scores[i-1], 5), scoreKey(scores[i], 0), "%v before %v", scores[i-1], scores[i])
	}
	assert.Less(t, scoreKey(-2, 1), scoreKey(-2, 2), "equal scores: leftmost first")
}
