package childproc

import (
	"fmt"
	"os"
	"strconv"
	"strings"
)

// residentMemory is a process's anonymous resident memory in bytes
// (RssAnon: its heap and stacks), 0 when it cannot be read (the process
// has gone). Not VmRSS: a child of the same binary shares the binary's
// pages with its parent, and the container's memory accounting charges
// them once; a karpgate child has about 65 MiB of them resident before it
// does anything, and about 15 MiB of its own.
func residentMemory(pid int) int64 {
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(status), "\n") {
		if v, ok := strings.CutPrefix(line, "RssAnon:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			if err != nil {
				return 0
			}
			return kb << 10
		}
	}
	return 0
}
