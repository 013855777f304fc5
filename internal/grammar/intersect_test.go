package grammar_test

import (
	"encoding/json"
	"errors"
	"math/rand/v2"
	"regexp"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/realizar-host/realizar-host/internal/grammar"
)

// TestStringIntersections: a string with format, pattern and lengths
// together accepts exactly what each accepts alone (the single-keyword
// grammars, and Go's regexp for the pattern) at once, on mutations of
// valid strings around the bounds. The schemas include what zod v4 writes
// for z.email(), z.uuid(), z.iso.date(), z.iso.datetime() and
// z.string().regex(r).max(n).
func TestStringIntersections(t *testing.T) {
	const (
		zodEmail    = `^(?:[A-Za-z0-9_'+\-]+\.)*[A-Za-z0-9_'+\-]*[A-Za-z0-9_+-]@(?:[A-Za-z0-9][A-Za-z0-9\-]*\.)+[A-Za-z]{2,}$`
		zodUUID     = `^([0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[1-8][0-9a-fA-F]{3}-[89abAB][0-9a-fA-F]{3}-[0-9a-fA-F]{12}|00000000-0000-0000-0000-000000000000|ffffffff-ffff-ffff-ffff-ffffffffffff)$`
		zodDate     = `^(?:(?:\d\d[2468][048]|\d\d[13579][26]|\d\d0[48]|[02468][048]00|[13579][26]00)-02-29|\d{4}-(?:(?:0[13578]|1[02])-(?:0[1-9]|[12]\d|3[01])|(?:0[469]|11)-(?:0[1-9]|[12]\d|30)|(?:02)-(?:0[1-9]|1\d|2[0-8])))$`
		zodDateTime = `^(?:(?:\d\d[2468][048]|\d\d[13579][26]|\d\d0[48]|[02468][048]00|[13579][26]00)-02-29|\d{4}-(?:(?:0[13578]|1[02])-(?:0[1-9]|[12]\d|3[01])|(?:0[469]|11)-(?:0[1-9]|[12]\d|30)|(?:02)-(?:0[1-9]|1\d|2[0-8])))T(?:(?:[01]\d|2[0-3]):[0-5]\d:[0-5]\d(?:\.\d+)?(?:Z))$`
	)
	tests := []struct {
		name, format, pattern string
		minL, maxL            int // -1: absent
		seeds                 []string
	}{
		{"zod email", "email", zodEmail, -1, -1, []string{"a.b@example.com", "x_y+z@mail.co", "o'neil@a-b.org"}},
		{"zod uuid", "uuid", zodUUID, -1, -1, []string{"123e4567-e89b-12d3-a456-426614174000", "00000000-0000-0000-0000-000000000000"}},
		{"zod date", "date", zodDate, -1, -1, []string{"2024-02-29", "2023-12-31", "1900-02-28", "2000-02-29"}},
		{"zod datetime", "date-time", zodDateTime, -1, -1, []string{"2024-01-02T03:04:05Z", "2024-02-29T23:59:59.5Z", "2024-01-02T03:04:05+01:00"}},
		{"zod regex max", "", `^[A-Z]{2}[0-9]+$`, -1, 6, []string{"AB1", "XY1234", "AB12345"}},
		{"pattern min max", "", `^[a-c]*$`, 2, 4, []string{"ab", "abcabc", "c"}},
		{"email max", "email", "", -1, 12, []string{"a@bc.de", "abcdef@gh.ij", "abcdefg@hi.jk"}},
		{"date min", "date", "", 10, -1, []string{"2024-01-01"}},
		{"hostname pattern", "hostname", `^[a-z.]+$`, 3, -1, []string{"a.b", "example.com", "Ex.com"}},
		{"ipv4 pattern", "ipv4", `^10\.`, -1, -1, []string{"10.0.0.1", "192.168.0.1", "10.256.0.1"}},
	}
	v, _ := byteVocab(t)
	accepts := func(t *testing.T, schema map[string]any) func(string) bool {
		b, err := json.Marshal(schema)
		require.NoError(t, err)
		src, err := grammar.FromJSONSchema(b)
		require.NoError(t, err, string(b))
		g, err := grammar.Compile(src)
		require.NoError(t, err)
		m := grammar.NewMatcher(g, v)
		return func(s string) bool {
			q, _ := json.Marshal(s)
			m.Reset()
			return m.AcceptBytes(q) == nil && m.Done()
		}
	}
	const alphabet = "aAbz09-.:@T+Z_'é\""
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			schema := map[string]any{"type": "string"}
			var alone []func(string) bool
			if tt.format != "" {
				schema["format"] = tt.format
				alone = append(alone, accepts(t, map[string]any{"type": "string", "format": tt.format}))
			}
			var re *regexp.Regexp
			if tt.pattern != "" {
				schema["pattern"] = tt.pattern
				alone = append(alone, accepts(t, map[string]any{"type": "string", "pattern": tt.pattern}))
				re = regexp.MustCompile(tt.pattern)
			}
			if tt.minL >= 0 {
				schema["minLength"] = tt.minL
			}
			if tt.maxL >= 0 {
				schema["maxLength"] = tt.maxL
			}
			both := accepts(t, schema)
			rng := rand.New(rand.NewPCG(1, uint64(len(tt.name))))
			accepted := 0
			for i := range 3000 {
				s := []rune(tt.seeds[i%len(tt.seeds)])
				for range rng.IntN(4) {
					k := rng.IntN(len(s) + 1)
					c := []rune(alphabet)[rng.IntN(utf8.RuneCountInString(alphabet))]
					switch rng.IntN(3) {
					case 0:
						s = append(s[:k], append([]rune{c}, s[k:]...)...)
					case 1:
						if k < len(s) {
							s = append(s[:k], s[k+1:]...)
						}
					default:
						if k < len(s) {
							s[k] = c
						}
					}
				}
				str := string(s)
				want := true
				for _, a := range alone {
					want = want && a(str)
				}
				if re != nil {
					want = want && re.MatchString(str)
				}
				n := len(s)
				want = want && (tt.minL < 0 || n >= tt.minL) && (tt.maxL < 0 || n <= tt.maxL)
				require.Equal(t, want, both(str), "%q", str)
				if want {
					accepted++
				}
			}
			assert.Positive(t, accepted)
		})
	}
}

// TestStringIntersectionRefusals: an intersection that cannot be enforced
// exactly is refused naming its keyword.
func TestStringIntersectionRefusals(t *testing.T) {
	tests := []struct {
		name, schema, keyword string
		err                   error
	}{
		{"pattern with any character and a length", `{"type":"string","pattern":"^.+$","maxLength":3}`, "pattern", grammar.ErrUnsupported},
		{"unanchored pattern and a length", `{"type":"string","pattern":"b+","maxLength":3}`, "pattern", grammar.ErrUnsupported},
		{"nothing satisfies both", `{"type":"string","format":"date","pattern":"^x"}`, "pattern", grammar.ErrUnsupported},
		{"too short for the format", `{"type":"string","format":"uuid","maxLength":35}`, "format", grammar.ErrUnsupported},
		{"too many states", `{"type":"string","pattern":"^[a-z]*$","maxLength":5000}`, "pattern", grammar.ErrTooLarge},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := grammar.FromJSONSchema([]byte(tt.schema))
			require.ErrorIs(t, err, tt.err)
			var se *grammar.SchemaError
			require.True(t, errors.As(err, &se), "%v", err)
			assert.Equal(t, tt.keyword, se.Keyword, err.Error())
		})
	}
}
