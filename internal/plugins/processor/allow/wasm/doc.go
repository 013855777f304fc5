//go:build wasip1

// Command wasm is the allow processor built with the Go SDK (plugin
// "allow-go", ABI 2): the same config and masks as the C build
// (../allow.c, whose comment is the specification). Build: plugins/build.sh go.
package main
