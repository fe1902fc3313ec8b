package app

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func execute(t *testing.T, stdin []byte, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errOut bytes.Buffer
	var in *bytes.Reader
	if stdin != nil {
		in = bytes.NewReader(stdin)
	}
	if in == nil {
		code = Execute(args, nil, &out, &errOut)
	} else {
		code = Execute(args, in, &out, &errOut)
	}
	return code, out.String(), errOut.String()
}

func TestConvertGolden(t *testing.T) {
	tests := []struct {
		name     string
		args     []string
		stdin    string // file under testdata/convert fed as standard input
		wantCode int
	}{
		{name: "comments", args: []string{"testdata/convert/comments/input.yaml"}},
		{name: "kubelet-split", args: []string{"testdata/convert/kubelet-split"}},
		{name: "check", args: []string{"--check", "testdata/convert/check/input.yaml"}, wantCode: exitConvertWouldChange},
		{name: "check-clean", args: []string{"--check", "testdata/convert/check-clean/input.yaml"}},
		{name: "stdin", args: []string{"-"}, stdin: "stdin/input.yaml"},
		{name: "malformed", args: []string{"testdata/convert/malformed/input.yaml"}, wantCode: exitConvertFailed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stdin []byte
			if tt.stdin != "" {
				var err error
				if stdin, err = os.ReadFile(filepath.Join("testdata", "convert", tt.stdin)); err != nil {
					t.Fatal(err)
				}
			}
			code, stdout, stderr := execute(t, stdin, append([]string{"convert"}, tt.args...)...)
			if code != tt.wantCode {
				t.Fatalf("exit %d, want %d\nstderr:\n%s", code, tt.wantCode, stderr)
			}
			golden(t, filepath.Join("convert", tt.name, "stdout.golden"), stdout)
			golden(t, filepath.Join("convert", tt.name, "stderr.golden"), stderr)
			if code != ExitOK || stdout == "" {
				return
			}
			// Converting the output again changes nothing.
			again, out2, err2 := execute(t, []byte(stdout), "convert", "--check", "-")
			if again != ExitOK {
				t.Errorf("the converted output is not stable: exit %d\n%s%s", again, out2, err2)
			}
		})
	}
}

// TestConvertWritesInPlace: -w rewrites exactly the files that change, with
// the same bytes the printing mode shows, and keeps their permissions.
func TestConvertWritesInPlace(t *testing.T) {
	dir := t.TempDir()
	input, err := os.ReadFile(filepath.Join("testdata", "convert", "comments", "input.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	converted := filepath.Join(dir, "karpenter.yaml")
	clean := filepath.Join(dir, "app.yaml")
	cleanBefore := []byte("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: app}\n")
	if err := os.WriteFile(converted, input, 0o640); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(clean, cleanBefore, 0o644); err != nil {
		t.Fatal(err)
	}
	if code, _, stderr := execute(t, nil, "convert", "-w", dir); code != ExitOK || !strings.Contains(stderr, "rewrote 1 of 2 inputs") {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	got, _ := os.ReadFile(converted)
	want, _ := os.ReadFile(filepath.Join("testdata", "convert", "comments", "stdout.golden"))
	if string(got) != string(want) {
		t.Errorf("-w wrote something else than printing shows:\n%s", got)
	}
	if info, _ := os.Stat(converted); info.Mode().Perm() != 0o640 {
		t.Errorf("permissions %v, want 0640 kept", info.Mode().Perm())
	}
	if cleanAfter, _ := os.ReadFile(clean); !bytes.Equal(cleanAfter, cleanBefore) {
		t.Errorf("a file with nothing to convert was rewritten")
	}
	if code, _, stderr := execute(t, nil, "convert", "--check", dir); code != ExitOK {
		t.Errorf("--check after -w: exit %d\n%s", code, stderr)
	}
}

func TestConvertUsage(t *testing.T) {
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"convert"}, "requires at least 1 arg"},
		{[]string{"convert", "-w", "-"}, "-w cannot rewrite standard input"},
		{[]string{"convert", "-w", "--check", "x.yaml"}, "-w and --check exclude each other"},
		{[]string{"convert", "testdata/convert/missing.yaml"}, "missing.yaml"},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			code, _, stderr := execute(t, nil, tt.args...)
			if code != ExitUsage || !strings.Contains(stderr, tt.want) {
				t.Fatalf("exit %d, stderr %q; want %d and %q", code, stderr, ExitUsage, tt.want)
			}
		})
	}
}
