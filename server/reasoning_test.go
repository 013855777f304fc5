package server

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestThinkSplit(t *testing.T) {
	for _, tc := range []struct {
		name               string
		open               bool // the prompt opened the block
		pieces             []string
		reasoning, content string
	}{
		{"no block", false, []string{"Hello", " world"}, "", "Hello world"},
		{"a block", false, []string{"<think>", "I think", "</think>", "\n\nAnswer"}, "I think", "Answer"},
		{"tags split across pieces", false, []string{" <th", "ink>a", "b</th", "ink", ">  c"}, "ab", "c"},
		{"opened by the prompt", true, []string{"why", "</think>", "so"}, "why", "so"},
		{"a later tag is content", false, []string{"x <think>y</think>"}, "", "x <think>y</think>"},
		{"an unclosed block is reasoning", false, []string{"<think>still </thi"}, "still </thi", ""},
		{"a prefix of the tag that is not one", false, []string{"<thin", "g>"}, "", "<thing>"},
		{"only space", false, []string{"  "}, "", "  "},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sp := &thinkSplit{in: tc.open}
			var r, c string
			for _, p := range tc.pieces {
				dr, dc := sp.feed(p, false)
				r, c = r+dr, c+dc
			}
			dr, dc := sp.feed("", true)
			assert.Equal(t, tc.reasoning, r+dr)
			assert.Equal(t, tc.content, c+dc)
			// Whole, in one piece, the same.
			whole := ""
			for _, p := range tc.pieces {
				whole += p
			}
			wr, wc := (&thinkSplit{in: tc.open}).feed(whole, true)
			assert.Equal(t, tc.reasoning, wr)
			assert.Equal(t, tc.content, wc)
		})
	}
}

func FuzzThinkSplit(f *testing.F) {
	f.Add("<think>a</think>b", 3)
	f.Add(" <th", 1)
	f.Fuzz(func(t *testing.T, s string, cut int) {
		if cut < 0 || cut > len(s) {
			return
		}
		a := &thinkSplit{}
		r1, c1 := a.feed(s[:cut], false)
		r2, c2 := a.feed(s[cut:], false)
		r3, c3 := a.feed("", true)
		wr, wc := (&thinkSplit{}).feed(s, true)
		assert.Equal(t, wr, r1+r2+r3)
		assert.Equal(t, wc, c1+c2+c3)
	})
}
