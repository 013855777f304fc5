package jinja

import (
	"encoding/json"
	"testing"
)

// FuzzRender: any template text parses or fails with an error, and
// renders (under small limits) or fails with an error; nothing panics.
func FuzzRender(f *testing.F) {
	for _, s := range []string{
		"{% for m in messages %}{{ m.role }}{% endfor %}",
		"{%- if x -%}{{ x|tojson(indent=2) }}{%+ else %}{# c #}{% endif %}",
		"{% macro f(a, b=1) %}{{ a ~ b }}{% endmacro %}{{ f(*[1], **{'b': 2}) }}",
		"{% set ns = namespace(a=[]) %}{{ ns.a[1:-1:2] }}{{ '%s %d'|format('a', 1) }}",
		"{% raw %}{{ x }}{% endraw %}{{ '{:>{}}'.format(1, 2) }}",
		"{{ messages[0].content.split()|map('upper')|join(',') }}{{ 'x' * 3 }}",
	} {
		f.Add(s)
	}
	vars := map[string]any{
		"messages": json.RawMessage(`[{"role":"user","content":"hi there"},{"role":"assistant","content":[{"type":"text","text":"a"}]}]`),
		"x":        json.RawMessage(`{"a":[1,2.5,null,true],"b":{"c":"d"}}`),
	}
	f.Fuzz(func(t *testing.T, src string) {
		tpl, err := Parse(src)
		if err != nil {
			return
		}
		_, _ = tpl.Render(vars, Options{Now: fixedNow, Limits: Limits{Steps: 10_000, Bytes: 1 << 16}})
	})
}
