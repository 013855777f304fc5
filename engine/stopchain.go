package engine

// StopChain is a stop policy made of several, asked in order for every
// token: the first that stops the turn decides (the later ones are not
// asked for that token), and while all of them continue, the hold-back is
// the largest of theirs, so no policy sees text released that it still
// holds. An error from any ends the turn. The CLI chains a --stop plugin
// and the embedded strings policy of --stop-string this way, the plugin
// first.
type StopChain []StopPolicy

// Reset resets every policy, in order; the first error is returned.
func (c StopChain) Reset() error {
	for _, p := range c {
		if err := p.Reset(); err != nil {
			return err
		}
	}
	return nil
}

// Check asks each policy in order; see StopChain.
func (c StopChain) Check(token int32, piece []byte) (Decision, error) {
	var out Decision
	for _, p := range c {
		d, err := p.Check(token, piece)
		if err != nil {
			return Decision{}, err
		}
		if d.Action != Continue {
			return d, nil
		}
		out.HoldBack = max(out.HoldBack, d.HoldBack)
	}
	return out, nil
}
