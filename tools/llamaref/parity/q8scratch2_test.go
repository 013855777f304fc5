package parity_test

import "strconv"

func strconvE(x float64) string { return strconv.FormatFloat(x, 'e', 1, 64) }
