package e2e

import (
	"bufio"
	"debug/elf"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/karpgate/karpgate/internal/devcluster/crdsource"
)

// dockerfileBuild is the Dockerfile's build step: optional cross-compilation
// variables, then a make target with VERSION and COMMIT.
var dockerfileBuild = regexp.MustCompile(`^RUN ((?:GO(?:OS|ARCH)=\$\{TARGET(?:OS|ARCH)\} )*)make ([a-z-]+) VERSION=\$\{VERSION\} COMMIT=\$\{COMMIT\}$`)

// TestDockerfileBuildsWhatMakeTestBuilds keeps the image honest without a
// Docker engine: the Dockerfile's one build command is a make target, that
// target's commands are among those `make test` runs, and they produce a
// static binary at the path the final stage copies from.
func TestDockerfileBuildsWhatMakeTestBuilds(t *testing.T) {
	root, err := crdsource.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	df := readDockerfile(t, filepath.Join(root, "Dockerfile"))
	var target string
	var runs []string
	for _, line := range df {
		if strings.HasPrefix(line, "RUN ") {
			runs = append(runs, line)
			if m := dockerfileBuild.FindStringSubmatch(line); m != nil {
				target = m[2]
			}
		}
	}
	if target == "" {
		t.Fatalf("no RUN line of the form %q among %q", dockerfileBuild, runs)
	}

	// make -n prints the commands without running them.
	vars := []string{"VERSION=v0.0.0-docker", "COMMIT=0123456789abcdef"}
	targetCmds := makeDryRun(t, root, append([]string{target}, vars...)...)
	testCmds := makeDryRun(t, root, append([]string{"test"}, vars...)...)
	var goBuild string
	for _, cmd := range targetCmds {
		if strings.Contains(cmd, "go build") {
			goBuild = cmd
		}
		if !slices.Contains(testCmds, cmd) {
			t.Errorf("`make %s` runs %q, which `make test` does not", target, cmd)
		}
	}
	for _, want := range []string{"CGO_ENABLED=0", "-trimpath", "buildinfo.Version=v0.0.0-docker", "buildinfo.Commit=0123456789abcdef", "-o bin/karpgate", "./cmd/karpgate"} {
		if !strings.Contains(goBuild, want) {
			t.Errorf("`make %s` builds with %q, which lacks %q", target, goBuild, want)
		}
	}

	checks := []struct {
		what, line string
	}{
		{"the final stage copies the built binary", "COPY --from=build /src/bin/karpgate /karpgate"},
		{"the builder works in /src", "WORKDIR /src"},
		{"the runtime image is distroless static, non-root", "FROM gcr.io/distroless/static-debian12:nonroot"},
		{"the user is numeric and not root", "USER 65532:65532"},
		{"the entrypoint is the binary", `ENTRYPOINT ["/karpgate"]`},
	}
	for _, c := range checks {
		if !slices.Contains(df, c.line) {
			t.Errorf("Dockerfile: %s: no line %q", c.what, c.line)
		}
	}

	// Build with the very command make prints, into a temporary file, and
	// check that it needs no dynamic loader: distroless/static has no libc.
	bin := filepath.Join(t.TempDir(), "karpgate")
	build := exec.Command("bash", "-c", strings.Replace(goBuild, "-o bin/karpgate", "-o "+bin, 1))
	build.Dir = root
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", goBuild, err, out)
	}
	f, err := elf.Open(bin)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP || p.Type == elf.PT_DYNAMIC {
			t.Fatalf("%s is dynamically linked (program header %v): the distroless static image cannot run it", bin, p.Type)
		}
	}
}

func readDockerfile(t *testing.T, path string) []string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var lines []string
	s := bufio.NewScanner(f)
	for s.Scan() {
		if line := strings.TrimSpace(s.Text()); line != "" && !strings.HasPrefix(line, "#") {
			lines = append(lines, line)
		}
	}
	if err := s.Err(); err != nil {
		t.Fatal(err)
	}
	return lines
}

func makeDryRun(t *testing.T, dir string, args ...string) []string {
	t.Helper()
	cmd := exec.Command("make", append([]string{"--no-print-directory", "-n"}, args...)...)
	cmd.Dir = dir
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("make -n %s: %v", strings.Join(args, " "), err)
	}
	var cmds []string
	for _, line := range strings.Split(string(out), "\n") {
		if line = strings.TrimSpace(line); line != "" {
			cmds = append(cmds, line)
		}
	}
	return cmds
}
