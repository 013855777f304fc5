package toolcall

import (
	"encoding/json"
	"strings"
)

// JSON scanning over text that may stop anywhere: the parsers use it both
// on a whole turn and on the text a stream has so far.

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

func skipSpace(s string, i int) int {
	for i < len(s) && isSpace(s[i]) {
		i++
	}
	return i
}

func onlySpace(s string) bool { return skipSpace(s, 0) == len(s) }

// scanValue finds the end of the JSON value that starts at s[i] (no
// leading space): end is the index after it when complete; complete false
// means s ends inside it; bad means it is not JSON as far as it goes (the
// lexical check: brackets, strings and literal characters; json.Valid
// judges a complete value).
func scanValue(s string, i int) (end int, complete, bad bool) {
	if i >= len(s) {
		return i, false, false
	}
	var stack []byte
	for i < len(s) {
		c := s[i]
		switch {
		case c == '"':
			j := i + 1
			for j < len(s) && s[j] != '"' {
				if s[j] == '\\' {
					j++
				}
				j++
			}
			if j >= len(s) {
				return len(s), false, false
			}
			i = j + 1
		case c == '{' || c == '[':
			stack = append(stack, c)
			i++
		case c == '}' || c == ']':
			open := byte('{')
			if c == ']' {
				open = '['
			}
			if len(stack) == 0 || stack[len(stack)-1] != open {
				return i, false, true
			}
			stack = stack[:len(stack)-1]
			i++
		case len(stack) > 0 && (isSpace(c) || c == ',' || c == ':'):
			i++
		case c == '-' || c == '+' || c == '.' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z':
			j := i
			for j < len(s) && (s[j] == '-' || s[j] == '+' || s[j] == '.' || s[j] >= '0' && s[j] <= '9' || s[j] >= 'a' && s[j] <= 'z' || s[j] >= 'A' && s[j] <= 'Z') {
				j++
			}
			if j == len(s) && len(stack) == 0 {
				return j, false, false // a number or literal may go on
			}
			i = j
		default:
			return i, false, true
		}
		if len(stack) == 0 {
			return i, true, false
		}
	}
	return len(s), false, false
}

// callScan is a call object read so far.
type callScan struct {
	name     string // the "name" value, once complete
	hasName  bool
	args     string // the arguments value's text: whole when argsDone, else what there is of an object
	argsDone bool
	argsStr  bool // the arguments were a JSON string (holding JSON)
	end      int  // index after the object, when done
	done     bool // the object is complete
	bad      bool // not a call object
}

// valid reports whether a complete scan is a call: a name and arguments
// that are a JSON object (or a string holding one).
func (c *callScan) valid() bool {
	if !c.done || c.bad || !c.hasName || !nameRE.MatchString(c.name) || !c.argsDone {
		return false
	}
	return strings.HasPrefix(c.args, "{") && json.Valid([]byte(c.args))
}

// scanCall reads the call object {"name": N, K: ARGS, ...} at s[i] (no
// leading space), K one of keys; other members are skipped.
func scanCall(s string, i int, keys []string) callScan {
	var c callScan
	if i >= len(s) {
		return c
	}
	if s[i] != '{' {
		c.bad = true
		return c
	}
	start := i
	i = skipSpace(s, i+1)
	if i < len(s) && s[i] == '}' {
		c.done, c.end = true, i+1
		return c
	}
	for i < len(s) {
		if s[i] != '"' {
			c.bad = true
			return c
		}
		kend, complete, bad := scanValue(s, i)
		if bad {
			c.bad = true
			return c
		}
		if !complete {
			return c
		}
		var key string
		if json.Unmarshal([]byte(s[i:kend]), &key) != nil {
			c.bad = true
			return c
		}
		i = skipSpace(s, kend)
		if i >= len(s) {
			return c
		}
		if s[i] != ':' {
			c.bad = true
			return c
		}
		i = skipSpace(s, i+1)
		if i >= len(s) {
			return c
		}
		vend, complete, bad := scanValue(s, i)
		if bad {
			c.bad = true
			return c
		}
		isArgs := false
		for _, k := range keys {
			isArgs = isArgs || key == k
		}
		switch {
		case key == "name" && !c.hasName:
			if !complete {
				return c
			}
			if json.Unmarshal([]byte(s[i:vend]), &c.name) != nil {
				c.bad = true
				return c
			}
			c.hasName = true
		case isArgs && !c.argsDone && c.args == "":
			if !complete {
				if s[i] == '{' {
					c.args = s[i:]
				}
				return c
			}
			c.args, c.argsDone = s[i:vend], true
			if s[i] == '"' {
				var inner string
				if json.Unmarshal([]byte(c.args), &inner) != nil {
					c.bad = true
					return c
				}
				c.args, c.argsStr = strings.TrimSpace(inner), true
			}
		}
		if !complete {
			return c
		}
		i = skipSpace(s, vend)
		if i >= len(s) {
			return c
		}
		switch s[i] {
		case ',':
			i = skipSpace(s, i+1)
		case '}':
			c.done, c.end = true, i+1
			if !json.Valid([]byte(s[start:c.end])) {
				c.bad = true
			}
			return c
		default:
			c.bad = true
			return c
		}
	}
	return c
}

// heldPrefix is the length of the longest suffix of s that is a proper
// prefix of one of marks: text a stream holds back until it knows
// whether a marker starts there.
func heldPrefix(s string, marks ...string) int {
	best := 0
	for _, m := range marks {
		for n := min(len(m)-1, len(s)); n > best; n-- {
			if strings.HasSuffix(s, m[:n]) {
				best = n
				break
			}
		}
	}
	return best
}
