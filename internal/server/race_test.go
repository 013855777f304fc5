//go:build race

package server

// raceSlowdown scales the load test's time bounds under the race detector,
// which makes the forward and the plugins several times slower while the
// plugins' deadlines stay wall-clock.
const raceSlowdown = 4
