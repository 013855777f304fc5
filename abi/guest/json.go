package guest

import (
	"strconv"
	"unicode/utf8"
)

// ParseStrings decodes a JSON array of strings; ok is false for anything
// else, and for input that is not valid UTF-8 (JSON text is UTF-8;
// encoding/json would replace such bytes, the SDKs refuse them). A lone
// surrogate escape decodes to U+FFFD, as encoding/json does. The C SDK's
// realizar_json_strings is the same parser.
func ParseStrings(s []byte) (out []string, ok bool) {
	if !utf8.Valid(s) {
		return nil, false
	}
	i := SkipSpace(s, 0)
	if i >= len(s) || s[i] != '[' {
		return nil, false
	}
	i = SkipSpace(s, i+1)
	if i < len(s) && s[i] == ']' {
		return []string{}, SkipSpace(s, i+1) == len(s)
	}
	for {
		str, next, ok := ParseString(s, i)
		if !ok {
			return nil, false
		}
		out = append(out, str)
		i = SkipSpace(s, next)
		switch {
		case i < len(s) && s[i] == ',':
			i = SkipSpace(s, i+1)
		case i < len(s) && s[i] == ']':
			return out, SkipSpace(s, i+1) == len(s)
		default:
			return nil, false
		}
	}
}

// SkipSpace returns the index of the first non-space byte of s at or after i.
func SkipSpace(s []byte, i int) int {
	for i < len(s) && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r') {
		i++
	}
	return i
}

// ParseString decodes the JSON string starting at s[i] (the opening quote)
// and returns it and the index after the closing quote.
func ParseString(s []byte, i int) (str string, next int, ok bool) {
	if i >= len(s) || s[i] != '"' {
		return "", i, false
	}
	i++
	var buf []byte
	for {
		if i >= len(s) {
			return "", i, false
		}
		c := s[i]
		i++
		switch {
		case c == '"':
			return string(buf), i, true
		case c < 0x20:
			return "", i, false
		case c != '\\':
			buf = append(buf, c)
			continue
		}
		if i >= len(s) {
			return "", i, false
		}
		c = s[i]
		i++
		var r rune
		switch c {
		case '"', '\\', '/':
			r = rune(c)
		case 'b':
			r = 8
		case 'f':
			r = 12
		case 'n':
			r = 10
		case 'r':
			r = 13
		case 't':
			r = 9
		case 'u':
			h, ok := hex4(s, i)
			if !ok {
				return "", i, false
			}
			i += 4
			r = rune(h)
			if r >= 0xd800 && r < 0xdc00 && i+6 <= len(s) && s[i] == '\\' && s[i+1] == 'u' {
				if lo, ok := hex4(s, i+2); ok && lo >= 0xdc00 && lo < 0xe000 {
					r = 0x10000 + (r-0xd800)<<10 + (rune(lo) - 0xdc00)
					i += 6
				}
			}
			if r >= 0xd800 && r < 0xe000 {
				r = utf8.RuneError
			}
		default:
			return "", i, false
		}
		buf = utf8.AppendRune(buf, r)
	}
}

func hex4(s []byte, i int) (int, bool) {
	if i+4 > len(s) {
		return 0, false
	}
	v, err := strconv.ParseUint(string(s[i:i+4]), 16, 32)
	return int(v), err == nil
}
