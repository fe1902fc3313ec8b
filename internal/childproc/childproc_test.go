package childproc

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"testing"
	"time"
)

// keptByHelper holds the allocate helper's chunks, so none is collected.
var keptByHelper [][]byte

// The test binary plays the child: with CHILDPROC_HELPER set, TestMain
// does what it says instead of running the tests.
func TestMain(m *testing.M) {
	switch os.Getenv("CHILDPROC_HELPER") {
	case "":
		os.Exit(m.Run())
	case "allocate":
		for {
			chunk := make([]byte, 16<<20)
			for i := range chunk {
				chunk[i] = 1 // touch every page, so it is resident
			}
			keptByHelper = append(keptByHelper, chunk)
		}
	case "block":
		for {
			time.Sleep(time.Hour) // a child that never finishes
		}
	case "fail":
		os.Stderr.WriteString("refusing the policies: they are wrong\n")
		os.Exit(1)
	case "succeed":
		os.Stdout.WriteString("fine\n")
		os.Exit(0)
	}
}

func helper(t *testing.T, what string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), "CHILDPROC_HELPER="+what)
	return cmd
}

func TestRun(t *testing.T) {
	tests := []struct {
		helper string
		limits Limits
		want   error
		text   string
	}{
		{"succeed", Limits{Memory: 256 << 20, Timeout: time.Minute}, nil, ""},
		{"fail", Limits{Memory: 256 << 20, Timeout: time.Minute}, nil, "refusing the policies: they are wrong"},
		{"block", Limits{Memory: 256 << 20, Timeout: 200 * time.Millisecond}, ErrTimeout, "(200ms)"},
	}
	if runtime.GOOS == "linux" {
		tests = append(tests, struct {
			helper string
			limits Limits
			want   error
			text   string
		}{"allocate", Limits{Memory: 128 << 20, Timeout: time.Minute}, ErrOutOfMemory, "the limit is 128 MiB"})
	}
	for _, tt := range tests {
		t.Run(tt.helper, func(t *testing.T) {
			res, err := Run(context.Background(), helper(t, tt.helper), tt.limits)
			switch {
			case tt.want != nil && !errors.Is(err, tt.want):
				t.Fatalf("got %v, want %v", err, tt.want)
			case tt.want == nil && tt.text == "" && err != nil:
				t.Fatalf("got %v", err)
			case tt.text != "" && (err == nil || !strings.Contains(err.Error(), tt.text)):
				t.Fatalf("got %v, want an error containing %q", err, tt.text)
			}
			if tt.helper == "succeed" && res.Stdout != "fine\n" {
				t.Errorf("stdout %q", res.Stdout)
			}
			if tt.helper == "allocate" && res.PeakMemory < tt.limits.Memory {
				t.Errorf("peak %d MiB, below the limit it was killed for", res.PeakMemory>>20)
			}
		})
	}
}
