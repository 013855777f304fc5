//go:build cuda || cudaemu

package cuda

import (
	"fmt"
	"math"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/realizar-host/realizar-host/forward"
	"github.com/realizar-host/realizar-host/model"
)

func clone(x []int32) []int32 { return append([]int32(nil), x...) }

// sameBits fails t unless got and want are the same float32 bits.
func sameBits(t *testing.T, want, got []float32, msg string, args ...any) {
	t.Helper()
	require.Len(t, got, len(want), fmt.Sprintf(msg, args...))
	for i := range want {
		if math.Float32bits(want[i]) != math.Float32bits(got[i]) {
			require.Failf(t, "logits differ", "%s: logit %d: %v alone, %v batched", fmt.Sprintf(msg, args...), i, want[i], got[i])
		}
	}
}

// Sequences of one upload (NewSequence) in one Batch: three prompts of
// different lengths prefilled together, then decoded together, give every
// row the logits of its sequence alone, bit for bit; a foreign row fails
// alone; the weights outlive the first sequence's Close and errClosed
// follows a sequence's own.
func TestGPUBatchEqualsAlone(t *testing.T) {
	path := platformFixtures(t)[0]
	m := loadPath(t, path)
	root := newTestSequence(t, m, "batch", path)
	seqs := []*gpuSequence{root}
	for range 2 {
		n, err := root.NewSequence()
		failLine(t, err, "batch", path)
		t.Cleanup(func() { n.Close() })
		seqs = append(seqs, n)
	}
	probe := probeSequence(m.Config().Vocab, 24)
	prompts := [][]int32{clone(probe[:3]), clone(probe[3:8]), clone(probe[7:8])}
	// Each prompt alone, on a sequence of its own that then decodes alone.
	alone := make([]*gpuSequence, len(prompts))
	want := make([][]float32, len(prompts))
	for i, p := range prompts {
		var err error
		alone[i], err = root.NewSequence()
		failLine(t, err, "batch", path)
		t.Cleanup(func() { alone[i].Close() })
		out, err := alone[i].Prefill(p, 0)
		if len(p) == 1 {
			out, err = alone[i].Step(p[0], 0)
		}
		require.NoError(t, err)
		want[i] = append([]float32(nil), out...)
	}

	rows := make([]forward.Rows, 0, len(seqs)+1)
	for i, s := range seqs {
		rows = append(rows, forward.Rows{Sequence: s, Start: 0, Tokens: prompts[i], Logits: true})
	}
	rows = append(rows, forward.Rows{Sequence: m.NewSequence(), Start: 0, Tokens: probe[:2], Logits: true})
	require.NoError(t, root.Batch(rows))
	for i := range seqs {
		require.NoError(t, rows[i].Err, "row %d", i)
		sameBits(t, want[i], rows[i].Out, "prefill, sequence %d", i)
	}
	assert.ErrorIs(t, rows[len(seqs)].Err, model.ErrForeignSequence)

	// Decode two steps together, against each sequence stepped alone.
	for step := range 2 {
		rows = rows[:0]
		for i, s := range seqs {
			tok := probe[20+step+i]
			rows = append(rows, forward.Rows{Sequence: s, Start: len(prompts[i]), Tokens: []int32{tok}, Logits: true})
			out, err := alone[i].Step(tok, len(prompts[i]))
			require.NoError(t, err)
			want[i] = append(want[i][:0], out...)
			prompts[i] = append(prompts[i], tok)
		}
		require.NoError(t, seqs[1].Batch(rows))
		for i := range prompts {
			require.NoError(t, rows[i].Err)
			sameBits(t, want[i], rows[i].Out, "decode step %d, sequence %d", step, i)
		}
	}
	fmt.Printf("batch %s: %d sequences of one upload, prefill and 2 decode steps bit-identical to alone\n", filepath.Base(path), len(seqs))

	// The upload outlives its first sequence.
	require.NoError(t, root.Close())
	_, err := root.Step(probe[0], 0)
	assert.ErrorIs(t, err, errClosed)
	out, err := seqs[1].Step(probe[0], 0)
	require.NoError(t, err)
	assert.Len(t, out, m.Config().Vocab)
}

// Gated steps: NewSequence of a step on the GPU is on the GPU too, and
// Batch over gated sequences gives each its logits alone; a sequence
// made from a fallen step is on the CPU without a new notice.
func TestGPUGatedSequences(t *testing.T) {
	path := platformFixtures(t)[0]
	m := loadPath(t, path)
	// A cached passing verdict: the gate itself is TestGPUNewSequence's.
	sum, err := FileSHA256(path)
	require.NoError(t, err)
	cache, err := OpenVerdictCache(filepath.Join(t.TempDir(), "v.json"))
	require.NoError(t, err)
	opts := testOptions()
	opts.FileSHA256, opts.Verdicts = sum, cache
	g, err := newGPUSequence(m, opts)
	failLine(t, err, "sequences", path)
	require.NoError(t, cache.put(verdictKey{fileSHA256: sum, device: g.DeviceName(), kernelHash: kernelHash()}, Verdict{OK: true}))
	require.NoError(t, g.Close())
	s, err := NewSequence(m, opts)
	failLine(t, err, "sequences", path)
	defer s.Close()
	require.True(t, s.OnGPU(), s.fallbackReason())
	n := s.NewSequence()
	defer n.Close()
	assert.True(t, n.OnGPU(), n.fallbackReason())

	probe := probeSequence(m.Config().Vocab, 12)
	a, b := clone(probe[:3]), clone(probe[3:5])
	rows := []forward.Rows{{Sequence: s, Tokens: a, Logits: true}, {Sequence: n, Tokens: b, Logits: true}}
	require.NoError(t, s.Batch(rows))
	for i, p := range [][]int32{a, b} {
		require.NoError(t, rows[i].Err)
		alone := s.NewSequence()
		want, err := alone.Prefill(p, 0)
		require.NoError(t, err)
		sameBits(t, want, rows[i].Out, "gated sequence %d", i)
		alone.Close()
	}
	// Resume the second at exactly what it holds.
	rows = []forward.Rows{{Sequence: n, Start: len(b), Tokens: probe[9:10], Logits: true}}
	require.NoError(t, s.Batch(rows))
	require.NoError(t, rows[0].Err)
	assert.Len(t, rows[0].Out, m.Config().Vocab)
}

// Batched greedy decoding on the device: four sequences of one upload with
// prompts of 5, 1, 4 and 2 tokens are prefilled together and then decode
// together, one Batch a step, in passes of at most 3 rows (so a prompt
// spans passes and every pass mixes sequences). Each sequence picks the
// tokens the CPU forward picks for its prompt alone, and every row's
// logits are bit-identical to that sequence run alone on the device.
func TestGPUBatchedGreedy(t *testing.T) {
	for _, path := range gpuFixtures(t) {
		t.Run(filepath.Base(path), func(t *testing.T) {
			m := loadPath(t, path)
			opts := testOptions()
			opts.BatchSize = 3
			g, err := newGPUSequence(m, opts)
			failLine(t, err, "batched greedy", path)
			t.Cleanup(func() { g.Close() })
			ctx := m.Config().ContextLength
			probe := probeSequence(m.Config().Vocab, 12)
			prompts := [][]int32{clone(probe[:5]), clone(probe[5:6]), clone(probe[6:10]), clone(probe[10:12])}
			n := 16
			if emulated {
				n = 3
			}
			seqs := []*gpuSequence{g}
			for len(seqs) < len(prompts) {
				s, err := g.NewSequence()
				failLine(t, err, "batched greedy", path)
				t.Cleanup(func() { s.Close() })
				seqs = append(seqs, s)
			}
			want := make([][]int32, len(prompts))
			alone := make([][][]float32, len(prompts))
			for i, p := range prompts {
				want[i], _, err = greedy(m.NewSequence(), ctx, p, n)
				require.NoError(t, err, "cpu")
				a, err := g.NewSequence()
				failLine(t, err, "batched greedy", path)
				_, alone[i], err = greedy(a, ctx, p, n)
				require.NoError(t, err, "gpu alone")
				require.NoError(t, a.Close())
			}

			got := make([][]int32, len(prompts))
			rows := make([]forward.Rows, len(seqs))
			for i, s := range seqs {
				rows[i] = forward.Rows{Sequence: s, Start: 0, Tokens: prompts[i], Logits: true}
			}
			for step := range n {
				require.NoError(t, g.Batch(rows))
				for i := range rows {
					failLine(t, rows[i].Err, "batched greedy", path)
					sameBits(t, alone[i][step], rows[i].Out, "step %d, sequence %d", step, i)
					tok := int32(argmax(rows[i].Out))
					got[i] = append(got[i], tok)
					rows[i] = forward.Rows{Sequence: seqs[i], Start: len(prompts[i]) + step, Tokens: []int32{tok}, Logits: true}
				}
			}
			same := 0
			for i := range want {
				if assert.Equal(t, want[i], got[i], "sequence %d", i) {
					same++
				}
			}
			fmt.Printf("batched greedy %s: %d sequences in passes of %d rows, %d/%d equal the CPU's %d tokens, logits bit-identical to alone\n",
				filepath.Base(path), len(seqs), opts.BatchSize, same, len(want), n)
		})
	}
}

// Decode passes replay as CUDA graphs, recorded once per row count: a
// step with them gives the logits of the same step launched kernel by
// kernel, bit for bit, at every position, through the cache's growth from
// 4 positions (which moves attention's scratch and so re-records), and
// in a two-sequence pass; the recordings are used.
func TestGPUGraphs(t *testing.T) {
	path := platformFixtures(t)[0]
	m := loadPath(t, path)
	on := newTestSequence(t, m, "graphs", path)
	opts := testOptions()
	opts.NoGraphs = true
	off, err := newGPUSequence(m, opts)
	failLine(t, err, "graphs", path)
	t.Cleanup(func() { off.Close() })
	if !testOptions().SyncEachLaunch {
		require.Empty(t, on.graphsOff, "decode passes are not recorded")
	}
	assert.Equal(t, "graphs: off (NoGraphs)", off.graphStatus())
	for _, s := range []*gpuSequence{on, off} {
		done := s.d.enter()
		require.NoError(t, s.grow(4))
		done()
	}
	probe := probeSequence(m.Config().Vocab, 14)
	for p, tok := range probe[:10] {
		want, err := off.Step(tok, p)
		require.NoError(t, err)
		want = append([]float32(nil), want...)
		got, err := on.Step(tok, p)
		failLine(t, err, "graphs", path)
		sameBits(t, want, got, "position %d", p)
	}
	// Two sequences per pass: each upload's second sequence joins.
	on2, err := on.NewSequence()
	require.NoError(t, err)
	t.Cleanup(func() { on2.Close() })
	off2, err := off.NewSequence()
	require.NoError(t, err)
	t.Cleanup(func() { off2.Close() })
	for _, s := range []*gpuSequence{on2, off2} {
		_, err := s.Step(probe[10], 0)
		require.NoError(t, err)
	}
	for k := range 3 {
		rows := func(a, b *gpuSequence) []forward.Rows {
			return []forward.Rows{
				{Sequence: a, Start: 10 + k, Tokens: probe[11+k : 12+k], Logits: true},
				{Sequence: b, Start: 1 + k, Tokens: probe[k : k+1], Logits: true},
			}
		}
		want, got := rows(off, off2), rows(on, on2)
		require.NoError(t, off.Batch(want))
		require.NoError(t, on.Batch(got))
		for i := range want {
			require.NoError(t, want[i].Err)
			require.NoError(t, got[i].Err)
			sameBits(t, want[i].Out, got[i].Out, "pass %d, sequence %d", k, i)
		}
	}
	fmt.Printf("graphs %s: %s; 10 steps and 3 two-row passes bit-identical to launch by launch\n", filepath.Base(path), on.graphStatus())
	if !testOptions().SyncEachLaunch {
		assert.Len(t, on.graphs, 2, "recorded shapes: 1 and 2 rows")
		// One row at scratch sizes 4, 8 and 16 (the cache's growth moves
		// the scratch: a stale recording would read the old one), and 64
		// (the second sequence's cache), then two rows.
		assert.Equal(t, 5, on.recordings, "recordings")
	}
}
