// Package reftest gives tests the llama.cpp reference and the shared model
// files, failing — not skipping — when CI=true and something is missing.
package reftest
