package sandbox

// StoppableCallsInFlight is how many calls of the builtins that stop with
// their evaluation (regular expressions, globs) are running.
func StoppableCallsInFlight() int64 { return stoppableCalls.Load() }

// StoppedCalls is how many such calls were stopped part way, in all.
func StoppedCalls() int64 { return stoppedCalls.Load() }

// Hold takes a slot of p until release is called.
func Hold(p *Pool) (release func()) {
	p.slots <- struct{}{}
	return p.release
}
