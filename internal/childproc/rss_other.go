//go:build !linux

package childproc

// residentMemory cannot be read here; only GOMEMLIMIT and the timeout
// bound the child.
func residentMemory(int) int64 { return 0 }
