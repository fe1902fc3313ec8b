package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"syscall"
	"time"
)

// tool is one command under measurement.
type tool struct {
	name, checks, binary string
	args                 func(corpus string) []string
	// exitCodes are the codes that mean "ran and reported": the corpus has
	// findings, so most tools exit non-zero.
	exitCodes []int
	// flagged counts the objects the tool's output names.
	flagged func(stdout []byte) (int, error)
}

type result struct {
	wall    time.Duration
	maxRSS  int64 // bytes
	flagged int
}

func karpgateTool(name, binary string) tool {
	return tool{
		name: name, checks: "rules, budgets, cross-object", binary: binary,
		args:      func(corpus string) []string { return []string{"lint", "--format", "json", corpus} },
		exitCodes: []int{0, 1},
		flagged: func(stdout []byte) (int, error) {
			var r struct {
				Findings []struct{ File, Kind, Name string }
			}
			if err := json.Unmarshal(stdout, &r); err != nil {
				return 0, err
			}
			objects := map[[3]string]bool{}
			for _, f := range r.Findings {
				objects[[3]string{f.File, f.Kind, f.Name}] = true
			}
			return len(objects), nil
		},
	}
}

func kubeconformTool(binary, schemaLocation string) tool {
	return tool{
		name: "kubeconform", checks: "schema", binary: binary,
		args: func(corpus string) []string {
			return []string{"-schema-location", schemaLocation, "-output", "json", corpus}
		},
		exitCodes: []int{0, 1},
		flagged: func(stdout []byte) (int, error) {
			var r struct {
				Resources []struct{ Filename, Kind, Name, Status string }
			}
			if err := json.Unmarshal(stdout, &r); err != nil {
				return 0, err
			}
			n := 0
			for _, res := range r.Resources {
				if res.Status != "statusValid" && res.Status != "statusSkipped" {
					n++
				}
			}
			return n, nil
		},
	}
}

// conftestObject reads the "Kind/name:" prefix every message of the
// conftest policy starts with.
var conftestObject = regexp.MustCompile(`^([A-Za-z0-9]+/[^:]+):`)

func conftestTool(binary, policyDir string) tool {
	return tool{
		name: "conftest", checks: "plain-Rego subset (7 checks)", binary: binary,
		args: func(corpus string) []string {
			return []string{"test", "--no-color", "--output", "json", "--policy", policyDir, corpus}
		},
		exitCodes: []int{0, 1},
		flagged: func(stdout []byte) (int, error) {
			var files []struct {
				Filename           string
				Warnings, Failures []struct{ Msg string }
			}
			if err := json.Unmarshal(stdout, &files); err != nil {
				return 0, err
			}
			objects := map[string]bool{}
			for _, f := range files {
				for _, m := range append(f.Warnings, f.Failures...) {
					if sub := conftestObject.FindStringSubmatch(m.Msg); sub != nil {
						objects[f.Filename+" "+sub[1]] = true
					}
				}
			}
			return len(objects), nil
		},
	}
}

// measure runs every tool over the corpus runs times, interleaved so that
// a busy moment on the machine hits all of them alike, and keeps each
// tool's fastest wall time and highest peak memory.
func measure(ctx context.Context, tools []tool, corpus, outDir string, runs int) ([]result, error) {
	if err := os.MkdirAll(outDir, 0o755); err != nil {
		return nil, err
	}
	results := make([]result, len(tools))
	for run := 0; run < max(runs, 1); run++ {
		for i, t := range tools {
			r, err := runOnce(ctx, t, corpus, filepath.Join(outDir, fmt.Sprintf("tool-%d.out", i)))
			if err != nil {
				return nil, err
			}
			if run > 0 && r.flagged != results[i].flagged {
				return nil, fmt.Errorf("%s flagged %d objects, then %d on the same corpus", t.name, results[i].flagged, r.flagged)
			}
			if run == 0 || r.wall < results[i].wall {
				results[i].wall = r.wall
			}
			results[i].maxRSS = max(results[i].maxRSS, r.maxRSS)
			results[i].flagged = r.flagged
		}
	}
	return results, nil
}

func runOnce(ctx context.Context, t tool, corpus, outFile string) (result, error) {
	stdout, err := os.Create(outFile)
	if err != nil {
		return result{}, err
	}
	defer stdout.Close()
	var stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, t.binary, t.args(corpus)...)
	cmd.Stdout, cmd.Stderr = stdout, &stderr
	start := time.Now()
	err = cmd.Run()
	wall := time.Since(start)
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		return result{}, fmt.Errorf("%s: %w", t.name, err)
	}
	if code := cmd.ProcessState.ExitCode(); !slices.Contains(t.exitCodes, code) {
		return result{}, fmt.Errorf("%s exited %d: %s", t.name, code, stderr.String())
	}
	usage, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	if !ok {
		return result{}, fmt.Errorf("%s: no resource usage from the operating system", t.name)
	}
	out, err := os.ReadFile(outFile)
	if err != nil {
		return result{}, err
	}
	flagged, err := t.flagged(out)
	if err != nil {
		return result{}, fmt.Errorf("%s: reading its output: %w", t.name, err)
	}
	// Linux reports maxrss in kilobytes.
	return result{wall: wall, maxRSS: usage.Maxrss * 1024, flagged: flagged}, nil
}
