package sandbox

// SlowCallsInFlight is how many slow builtin calls are running, abandoned
// ones included.
func SlowCallsInFlight() int { return len(slowCalls) }
