//go:build !linux

package model

// processTime has no process clock here: it reports false.
func processTime() (int64, bool) { return 0, false }
