// Command realizar-host runs and inspects GGUF language models.
//
// Usage:
//
//	realizar-host inspect MODEL.gguf [--json]
//	realizar-host fixture --preset NAME --out FILE [--vocab FILE] [--seed N]
//
// inspect prints a model's architecture, hyperparameters, tokenizer, and its
// tensors counted and sized by type. fixture writes a random-weight model
// for tests and benchmarks (see package fixture).
//
// Errors are printed as one line on stderr. Exit status: 0 success, 1 any
// other failure, 2 usage error (unknown command or flag, wrong arguments),
// 3 a model file that is missing, unreadable or malformed.
package main
