package childproc

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"strconv"
	"strings"
	"time"
)

// Limits bound a child.
type Limits struct {
	// Memory is the anonymous resident memory (heap and stacks, not the
	// binary's shared pages) the child may reach; the child is told it as
	// GOMEMLIMIT too, so a Go child collects harder before.
	Memory int64
	// Timeout bounds the child's run.
	Timeout time.Duration
}

// pollInterval is how often the child's resident memory is read. Between
// two reads a child can allocate past the limit by what it allocates in
// that time; the limit is a bound on a runaway, not an exact one.
const pollInterval = 10 * time.Millisecond

// ErrOutOfMemory and ErrTimeout say why a child was killed.
var (
	ErrOutOfMemory = errors.New("it went past its memory limit")
	ErrTimeout     = errors.New("it did not finish in time")
)

// Result is what a child left behind.
type Result struct {
	Stdout, Stderr string
	// PeakMemory is the highest resident memory seen (0 where it cannot be
	// read).
	PeakMemory int64
}

// Run runs cmd within limits and returns its output. An error wraps
// ErrOutOfMemory or ErrTimeout when the child was killed for them, or is
// the child's exit error, with what it wrote to stderr.
func Run(ctx context.Context, cmd *exec.Cmd, limits Limits) (Result, error) {
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if limits.Memory > 0 {
		cmd.Env = append(cmd.Environ(), "GOMEMLIMIT="+strconv.FormatInt(limits.Memory*9/10, 10))
	}
	ctx, cancel := context.WithTimeoutCause(ctx, limits.Timeout, ErrTimeout)
	defer cancel()
	if err := cmd.Start(); err != nil {
		return Result{}, fmt.Errorf("starting %s: %w", cmd.Path, err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	var res Result
	var killedFor error
	tick := time.NewTicker(pollInterval)
	defer tick.Stop()
	for {
		select {
		case err := <-exited:
			res.Stdout, res.Stderr = stdout.String(), stderr.String()
			if killedFor != nil {
				return res, killedFor
			}
			if err != nil {
				return res, fmt.Errorf("%w: %s", err, strings.TrimSpace(res.Stderr))
			}
			return res, nil
		case <-ctx.Done():
			if killedFor == nil {
				killedFor = fmt.Errorf("%w (%v)", context.Cause(ctx), limits.Timeout)
				_ = cmd.Process.Kill()
			}
		case <-tick.C:
			rss := residentMemory(cmd.Process.Pid)
			res.PeakMemory = max(res.PeakMemory, rss)
			if killedFor == nil && limits.Memory > 0 && rss > limits.Memory {
				killedFor = fmt.Errorf("%w (%d MiB resident, the limit is %d MiB)", ErrOutOfMemory, rss>>20, limits.Memory>>20)
				_ = cmd.Process.Kill()
			}
		}
	}
}
