//go:build linux

package host_test

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/realizar-host/realizar-host/engine/enginetest"
	"github.com/realizar-host/realizar-host/host"
)

// cpuDeadlineHelper, set in a child's environment, makes
// TestDeadlineCountsCPUTime the child.
const cpuDeadlineHelper = "REALIZAR_HOST_CPU_DEADLINE_HELPER"

// TestDeadlineCountsCPUTime: a plugin call's deadline counts its thread's
// CPU time, not the wall time a loaded machine keeps it waiting. A child
// process runs checks of spinwork (a fixed amount of work, some tens of
// milliseconds, per check) under a 300 ms CallTimeout, one after another,
// and the test stops the whole child (SIGSTOP) for 800 ms in the middle:
// the check it stopped takes more than its deadline in wall time, as
// under a machine too busy to run it, and still returns, as every other
// check does. A plugin that works past the deadline is still cut
// (TestStepDeadline, the hang plugins).
func TestDeadlineCountsCPUTime(t *testing.T) {
	const deadline = 300 * time.Millisecond
	if os.Getenv(cpuDeadlineHelper) != "" {
		cpuDeadlineChild(t, deadline)
		return
	}
	// The stop falls between two checks now and then (the child's loop
	// does little else): then the child is run again.
	for attempt := 1; ; attempt++ {
		walls, failures := stoppedChild(t)
		require.NotEmpty(t, walls, "the child ran no check")
		longest := slices.Max(walls)
		t.Logf("attempt %d: %d checks, the longest %v in wall time", attempt, len(walls), longest)
		assert.Empty(t, failures, "a check stopped past its deadline in wall time, within it in CPU time, failed")
		if longest > deadline || len(failures) > 0 {
			return
		}
		require.Less(t, attempt, 5, "the stop never fell inside a check")
	}
}

// stoppedChild runs the child of TestDeadlineCountsCPUTime, stopped for
// 800 ms 200 ms after it starts its checks, and returns each check's wall
// time and the errors of those that failed.
func stoppedChild(t *testing.T) (walls []time.Duration, failures []string) {
	cmd := exec.Command(os.Args[0], "-test.run=^TestDeadlineCountsCPUTime$", "-test.count=1")
	cmd.Env = append(os.Environ(), cpuDeadlineHelper+"=1")
	stdin, err := cmd.StdinPipe()
	require.NoError(t, err)
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	cmd.Stderr = os.Stderr
	require.NoError(t, cmd.Start())
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	sc := bufio.NewScanner(stdout)
	for sc.Scan() {
		line := sc.Text()
		if line == "ready" {
			go func() {
				time.Sleep(200 * time.Millisecond)
				_ = cmd.Process.Signal(syscall.SIGSTOP)
				time.Sleep(800 * time.Millisecond)
				_ = cmd.Process.Signal(syscall.SIGCONT)
				time.Sleep(200 * time.Millisecond)
				_ = stdin.Close() // the child's signal to finish
			}()
			continue
		}
		if rest, ok := strings.CutPrefix(line, "check "); ok {
			wall, res, _ := strings.Cut(rest, " ")
			ns, err := strconv.ParseInt(wall, 10, 64)
			require.NoError(t, err, line)
			walls = append(walls, time.Duration(ns))
			if res != "ok" {
				failures = append(failures, res)
			}
		}
	}
	require.NoError(t, cmd.Wait())
	return walls, failures
}

// cpuDeadlineChild is the child of TestDeadlineCountsCPUTime: checks of
// spinwork until its stdin closes or one fails, then each printed as
// "check WALL_NS ok" or "check WALL_NS ERROR" (after the loop, which does
// nothing but checks).
func cpuDeadlineChild(t *testing.T, deadline time.Duration) {
	h := newHost(t, host.NewConfig())
	p := load(t, h, "spinwork", host.LoadOptions{Limits: host.Limits{CallTimeout: deadline}})
	stop, err := host.NewStopPolicy(enginetest.NewTokenVocab(8, nil), p)
	require.NoError(t, err)
	defer stop.Close()
	require.NoError(t, stop.Reset())
	var done atomic.Bool
	go func() {
		_, _ = bufio.NewReader(os.Stdin).ReadString(0)
		done.Store(true)
	}()
	type result struct {
		wall time.Duration
		err  error
	}
	results := make([]result, 0, 1000)
	fmt.Println("ready")
	for !done.Load() && len(results) < cap(results) {
		t0 := time.Now()
		_, err := stop.Check(2, []byte("t2"))
		results = append(results, result{time.Since(t0), err})
		if err != nil {
			break
		}
	}
	for _, r := range results {
		res := "ok"
		if r.err != nil {
			res = strings.ReplaceAll(r.err.Error(), "\n", " ")
		}
		fmt.Printf("check %d %s\n", r.wall.Nanoseconds(), res)
	}
}
