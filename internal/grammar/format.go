package grammar

import (
	"errors"
	"strconv"
	"strings"
	"unicode/utf8"
)

// This package formats its own messages instead of importing fmt (or
// encoding/json, which imports it): fmt links package os, whose WASI file
// imports a plugin host refuses, and the grammar processor plugin is this
// package built for wasip1.

// wrapError is an error with a message that wraps err.
type wrapError struct {
	msg string
	err error
}

func (e *wrapError) Error() string { return e.msg }
func (e *wrapError) Unwrap() error { return e.err }

// errorf formats like fmt.Errorf for the verbs sprintf knows; the first
// %w argument is wrapped.
func errorf(format string, a ...any) error {
	msg := sprintf(format, a...)
	for i := 0; i+1 < len(format); i++ {
		if format[i] == '%' && format[i+1] == '%' {
			i++
			continue
		}
		if format[i] == '%' {
			// find this verb's argument index
			idx := strings.Count(strings.ReplaceAll(format[:i], "%%", ""), "%")
			j := i + 1
			for j < len(format) && strings.IndexByte("#0123456789.", format[j]) >= 0 {
				j++
			}
			if j < len(format) && format[j] == 'w' && idx < len(a) {
				if err, ok := a[idx].(error); ok {
					return &wrapError{msg, err}
				}
			}
		}
	}
	return errors.New(msg)
}

// sprintf formats %s %v %w %d %q %c %g %x %X with the flags # and 0, a
// width and, for %s, a precision: the subset this package uses.
func sprintf(format string, a ...any) string {
	var b strings.Builder
	n := 0
	for i := 0; i < len(format); i++ {
		c := format[i]
		if c != '%' {
			b.WriteByte(c)
			continue
		}
		i++
		if i >= len(format) {
			b.WriteByte('%')
			break
		}
		if format[i] == '%' {
			b.WriteByte('%')
			continue
		}
		alt, zero := false, false
		for ; i < len(format) && (format[i] == '#' || format[i] == '0'); i++ {
			alt = alt || format[i] == '#'
			zero = zero || format[i] == '0'
		}
		width := 0
		for ; i < len(format) && format[i] >= '0' && format[i] <= '9'; i++ {
			width = width*10 + int(format[i]-'0')
		}
		prec := -1
		if i < len(format) && format[i] == '.' {
			prec = 0
			for i++; i < len(format) && format[i] >= '0' && format[i] <= '9'; i++ {
				prec = prec*10 + int(format[i]-'0')
			}
		}
		if i >= len(format) {
			break
		}
		verb := format[i]
		var arg any
		if n < len(a) {
			arg = a[n]
		}
		n++
		s := formatArg(verb, arg, alt, prec)
		if len(s) < width {
			pad := " "
			if zero {
				pad = "0"
			}
			s = strings.Repeat(pad, width-len(s)) + s
		}
		b.WriteString(s)
	}
	return b.String()
}

func formatArg(verb byte, arg any, alt bool, prec int) string {
	if verb == 'x' || verb == 'X' || verb == 'd' {
		var v uint64
		neg := false
		switch x := arg.(type) {
		case int:
			neg, v = x < 0, uint64(abs64(int64(x)))
		case int32:
			neg, v = x < 0, uint64(abs64(int64(x)))
		case int64:
			neg, v = x < 0, uint64(abs64(x))
		case uint8:
			v = uint64(x)
		case uint32:
			v = uint64(x)
		case uint64:
			v = x
		case uint16:
			v = uint64(x)
		default:
			return formatArg('v', arg, alt, prec)
		}
		base := 10
		if verb != 'd' {
			base = 16
		}
		s := strconv.FormatUint(v, base)
		if verb == 'X' {
			s = strings.ToUpper(s)
		}
		if alt && base == 16 {
			s = "0x" + s
		}
		if neg {
			s = "-" + s
		}
		return s
	}
	switch verb {
	case 'q':
		switch x := arg.(type) {
		case string:
			return strconv.Quote(x)
		case []byte:
			return strconv.Quote(string(x))
		case rune:
			return strconv.QuoteRune(x)
		case byte:
			return strconv.QuoteRune(rune(x))
		}
	case 'c':
		switch x := arg.(type) {
		case rune:
			return string(x)
		case byte:
			return string(rune(x))
		}
	case 'g':
		if f, ok := arg.(float64); ok {
			return strconv.FormatFloat(f, 'g', -1, 64)
		}
	}
	var s string
	switch x := arg.(type) {
	case nil:
		s = "<nil>"
	case string:
		s = x
	case []byte:
		s = string(x)
	case error:
		s = x.Error()
	case int:
		s = strconv.Itoa(x)
	case int32:
		s = strconv.FormatInt(int64(x), 10)
	case int64:
		s = strconv.FormatInt(x, 10)
	case uint64:
		s = strconv.FormatUint(x, 10)
	case float64:
		s = strconv.FormatFloat(x, 'g', -1, 64)
	case bool:
		s = strconv.FormatBool(x)
	case uint8:
		s = strconv.Itoa(int(x))
	case []string:
		s = "[" + strings.Join(x, " ") + "]"
	default:
		s = "?"
	}
	if prec >= 0 && verb == 's' && len(s) > prec {
		s = s[:prec]
		for len(s) > 0 && !utf8.ValidString(s) {
			s = s[:len(s)-1]
		}
	}
	return s
}

func abs64(x int64) int64 {
	if x < 0 {
		return -x
	}
	return x
}
