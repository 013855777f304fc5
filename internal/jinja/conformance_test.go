package jinja

import (
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// hfCase is one conversation of testdata/hf/conversations.json.
type hfCase struct {
	Name                string          `json:"name"`
	AddGenerationPrompt bool            `json:"add_generation_prompt"`
	Tools               bool            `json:"tools"`
	Messages            json.RawMessage `json:"messages"`
}

type hfSet struct {
	Now   string          `json:"now"`
	BOS   string          `json:"bos_token"`
	EOS   string          `json:"eos_token"`
	Tools json.RawMessage `json:"tools"`
	Cases []hfCase        `json:"cases"`
}

// hfExpected is Jinja2's result for one case (render.py).
type hfExpected struct {
	Text  *string `json:"text"`
	Error string  `json:"error"`
}

func loadHFSet(t testing.TB) hfSet {
	data, err := os.ReadFile("testdata/hf/conversations.json")
	require.NoError(t, err)
	var set hfSet
	require.NoError(t, json.Unmarshal(data, &set))
	return set
}

// hfVars are the variables transformers passes for c.
func (set hfSet) vars(c hfCase) map[string]any {
	var tools any
	if c.Tools {
		tools = set.Tools
	}
	return map[string]any{
		"messages":              c.Messages,
		"tools":                 tools,
		"add_generation_prompt": c.AddGenerationPrompt,
		"bos_token":             set.BOS,
		"eos_token":             set.EOS,
	}
}

// conformance is the outcome of rendering the collection.
type conformance struct {
	completed, identical    int // renders Jinja2 completes; of those, byte-identical here
	jinjaFailed, bothFailed int
	templates, templatesOK  int      // templates Jinja2 renders at least once; identical on one case at least
	differ                  []string // "template/case" rendered differently or failed here only
	onlyOurs                []string // "template/case" Jinja2 fails and we render
}

func runConformance(t testing.TB) conformance {
	set := loadHFSet(t)
	now, err := time.Parse(time.RFC3339, set.Now)
	require.NoError(t, err)
	files, err := filepath.Glob("testdata/hf/expected/*.json")
	require.NoError(t, err)
	require.NotEmpty(t, files)
	var c conformance
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".json")
		src, err := os.ReadFile(filepath.Join("testdata/hf/templates", name+".jinja"))
		require.NoError(t, err)
		data, err := os.ReadFile(f)
		require.NoError(t, err)
		var want map[string]hfExpected
		require.NoError(t, json.Unmarshal(data, &want))
		tpl, perr := Parse(string(src))
		any, ok := false, false
		for _, cs := range set.Cases {
			w, found := want[cs.Name]
			require.True(t, found, "%s: no expected render for %s (rerun render.py)", name, cs.Name)
			var got string
			rerr := perr
			if perr == nil {
				got, rerr = tpl.Render(set.vars(cs), Options{Now: now, Limits: DefaultLimits})
			}
			id := name + "/" + cs.Name
			if w.Text == nil {
				c.jinjaFailed++
				if rerr != nil {
					c.bothFailed++
				} else {
					c.onlyOurs = append(c.onlyOurs, id)
				}
				continue
			}
			c.completed++
			any = true
			if rerr == nil && got == *w.Text {
				c.identical++
				ok = true
				continue
			}
			c.differ = append(c.differ, id)
			if testing.Verbose() {
				if rerr != nil {
					t.Logf("%s: error: %v", id, rerr)
				} else {
					t.Logf("%s: differs at byte %d:\n got %q\nwant %q", id, diffAt(got, *w.Text), clip(got, diffAt(got, *w.Text)), clip(*w.Text, diffAt(got, *w.Text)))
				}
			}
		}
		if any {
			c.templates++
			if ok {
				c.templatesOK++
			}
		}
	}
	sort.Strings(c.differ)
	return c
}

func diffAt(a, b string) int {
	i := 0
	for i < len(a) && i < len(b) && a[i] == b[i] {
		i++
	}
	return i
}

func clip(s string, at int) string {
	lo, hi := max(0, at-40), min(len(s), at+60)
	return s[lo:hi]
}

// knownDifferences lists the renders (template/case) allowed to differ
// from Jinja2; testdata/hf/README.md says why for each.
func knownDifferences(t testing.TB) map[string]bool {
	data, err := os.ReadFile("testdata/hf/known-differences.txt")
	if os.IsNotExist(err) {
		return map[string]bool{}
	}
	require.NoError(t, err)
	known := map[string]bool{}
	for _, l := range strings.Split(string(data), "\n") {
		if l = strings.TrimSpace(l); l != "" && !strings.HasPrefix(l, "#") {
			known[strings.Fields(l)[0]] = true
		}
	}
	return known
}

// TestConformanceHF renders llama.cpp's template collection over the
// conversation set and compares each render with Jinja2's
// (testdata/hf/render.py, Debian's python3-jinja2): at least 98% of the
// renders Jinja2 completes are byte-identical, every template Jinja2
// renders is identical on one conversation at least, and only the renders
// in known-differences.txt differ. Run with -v to see each difference.
func TestConformanceHF(t *testing.T) {
	c := runConformance(t)
	rate := float64(c.identical) / float64(c.completed)
	t.Logf("identical: %d of %d renders Jinja2 completes (%.1f%%); templates identical on a conversation: %d of %d; Jinja2 failed %d renders, we failed %d of them too",
		c.identical, c.completed, 100*rate, c.templatesOK, c.templates, c.jinjaFailed, c.bothFailed)
	if len(c.onlyOurs) > 0 {
		t.Logf("rendered where Jinja2 fails: %v", c.onlyOurs)
	}
	assert.GreaterOrEqual(t, rate, 0.98)
	assert.Equal(t, c.templates, c.templatesOK, "every template Jinja2 renders is identical on one conversation")
	known := knownDifferences(t)
	for _, id := range c.differ {
		assert.True(t, known[id], "%s differs from Jinja2 and is not in known-differences.txt", id)
	}
}
