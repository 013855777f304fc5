//go:build !race

package server

// raceSlowdown scales the load test's time bounds (see race_test.go).
const raceSlowdown = 1
