// Package host runs realizar-host plugins (abi/ABI.md, versions 1 and 2,
// each module at the version it declares) in a wazero sandbox and adapts
// them to the engine's Sampler and StopPolicy.
//
// The life of a plugin:
//
//	h, _ := host.New(ctx, host.NewConfig())              // one per process
//	p, _ := h.LoadFile(ctx, "greedy.wasm", host.LoadOptions{}) // validate + compile once
//	s, _ := host.NewSampler(vocab, p)                    // one per Session
//	defer s.Close()
//	s.Reset(seed, prompt)                                // instantiates on first use
//	id, err := s.Sample(logits)                          // one copy + one call per policy
//
// Load validates before compiling: size cap, magic, metadata section, marker
// export and ABI version, kind, required exports, and imports only from the
// allow-list (module "realizar" and the WASI functions abi.WASIAllowList()
// names, each with its exact type). The compiled module is shared by every
// Session; each adapter owns its own instances (a wazero function is not
// goroutine-safe), so two Sessions share no memory and no RNG state.
//
// Every call into a guest runs under a deadline, counted in the CPU time of
// the call's thread (Limits.CallTimeout); a guest that traps, exits,
// runs past its deadline or asks for memory past its page cap is closed and
// discarded, the call returns a *PluginError naming the plugin, the phase
// and its last log line (or a Go guest's crash line, PluginError.Crash), wrapping ErrPluginTrap, ErrPluginTimeout or ErrPluginMemory, and the next
// Reset instantiates afresh from the compiled module. A token id outside
// [0, n_vocab) wraps forward.ErrBadToken. The host never reads the guest's
// input region back; it reads only results and a processor's output region
// or (ABI 2) its allowed-token mask, which it applies before the next
// stage; a mask that leaves no token to sample wraps
// engine.ErrNoTokenAllowed.
//
// Compiled code is freed as soon as nothing holds it: the Host's cache
// holds a module until Evict (or its budget drops it), a Plugin until its
// Close (or until the collector finds it unreachable), an adapter until
// its Close. So a deleted plugin's code goes when the last request
// running it ends.
//
// A Host, and a Plugin, are safe for concurrent use; a Sampler or StopPolicy
// is used by one goroutine at a time.
package host
