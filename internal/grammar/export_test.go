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

// NewUnsharedMatcher is a matcher that neither takes nor gives masks to
// the other matchers of g (the reference for the shared cache's tests).
func NewUnsharedMatcher(g *Grammar, v *Vocab) *Matcher { return newMatcher(g, v) }

// SetSharedCap sets the shared caches' byte cap until the returned
// function restores it.
func SetSharedCap(n int) func() {
	old := maxSharedBytes
	maxSharedBytes = n
	return func() { maxSharedBytes = old }
}

// Allows reports whether Accept(id) would succeed here, without moving.
func (m *Matcher) Allows(id int32) bool {
	cur, done := m.cur, m.done
	err := m.Accept(id)
	m.cur, m.done = cur, done
	return err == nil
}
