//go:build wasip1

// Command wasm is the standard sampler built with the Go SDK (plugin
// "standard-go"). Build: plugins/build.sh go.
package main
