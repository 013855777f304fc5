package toolcall

import (
	"encoding/json"
	"strings"
	"testing"
)

// FuzzParse runs every family's parser (fam picks it) on any text: no
// panic, every call it returns has a valid name and arguments that are a
// JSON object, a text without calls is all content, unchanged, and a
// stream fed the text in two pieces (split at cut) ends with the same
// message. One target for the five parsers, so that CI's fuzz stage (each
// target runs FUZZTIME) grows by one run, not five.
func FuzzParse(f *testing.F) {
	for _, tc := range loadCases(f) {
		f.Add(tc.Text, uint8(familyByName(f, tc.Family)), uint8(len(tc.Text)/2))
	}
	f.Fuzz(func(t *testing.T, text string, fam, cut uint8) {
		family := Family(fam % uint8(MistralArgs+1))
		m := Parse(family, text)
		for _, c := range m.Calls {
			if !nameRE.MatchString(c.Name) {
				t.Fatalf("call name %q", c.Name)
			}
			if !strings.HasPrefix(c.Arguments, "{") || !json.Valid([]byte(c.Arguments)) {
				t.Fatalf("arguments %q are not a JSON object", c.Arguments)
			}
		}
		if len(m.Calls) == 0 && m.Content != text {
			t.Fatalf("%s: no calls, content %q is not the text %q", family, m.Content, text)
		}
		k := min(int(cut), len(text))
		s := NewStream(family, func() string { return "id" })
		s.Feed(text[:k])
		s.Feed(text[k:])
		_, sm := s.Finish()
		if sm.Content != m.Content || len(sm.Calls) != len(m.Calls) {
			t.Fatalf("%s: stream %+v, parse %+v", family, sm, m)
		}
	})
}
