package grammar

// Visits is the number of trie nodes the matcher's masks have stepped.
func (m *Matcher) Visits() int { return m.visits }

// Loops is the number of loop tables v keeps.
func (v *Vocab) Loops() int { v.mu.Lock(); defer v.mu.Unlock(); return len(v.loops) }

// LoopTables returns the keys.
func (v *Vocab) LoopTables() []string {
	v.mu.Lock()
	defer v.mu.Unlock()
	var out []string
	for k := range v.loops {
		out = append(out, k)
	}
	return out
}

// SkipAll makes walks take every subtree they can whole (see
// minSkipNodes) until the returned function restores the default.
func SkipAll() func() {
	old := minSkipNodes
	minSkipNodes = 1
	return func() { minSkipNodes = old }
}
