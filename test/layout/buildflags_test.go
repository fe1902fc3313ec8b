package layout

import (
	"regexp"
	"strings"
	"testing"

	"github.com/karpgate/karpgate/internal/buildinfo"
)

// Go's build cache keys a compiled package by its build flags. bin/karpgate,
// the harness's programs, the control plane, go vet, golangci-lint, the
// tests, the release build and the tests' own builds share thousands of
// packages, so one build that differs by a flag compiles all of them again:
// minutes of a fresh `make test`, with nothing failing to say so. The
// Makefile's GO_BUILD_FLAGS and buildinfo.GoBuildFlags (the Go builders')
// are one set, every go command of the Makefile takes it, and the Action's
// source build reads it from the Makefile.
func TestEveryBuildTakesGoBuildFlags(t *testing.T) {
	makefile := repoFile(t, "Makefile")

	want := strings.Join(buildinfo.GoBuildFlags(), " ")
	m := regexp.MustCompile(`(?m)^GO_BUILD_FLAGS := (.*)$`).FindStringSubmatch(makefile)
	switch {
	case m == nil:
		t.Errorf("Makefile: no GO_BUILD_FLAGS := line (action/install.sh reads it)")
	case m[1] != want:
		t.Errorf("Makefile GO_BUILD_FLAGS is %q, internal/buildinfo.GoBuildFlags %q: make them one set", m[1], want)
	}

	// A go command that compiles: build, install, run, test or vet, as a
	// recipe line or the harness's build command.
	compiles := regexp.MustCompile(`\$\(GO\) (build|install|run|test|vet)\b`)
	checked := 0
	for i, line := range strings.Split(makefile, "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "#") || !compiles.MatchString(line) {
			continue
		}
		checked++
		if !strings.Contains(line, "$(GO_BUILD_FLAGS)") && !strings.Contains(line, "$(TEST_BUILD)") {
			t.Errorf("Makefile:%d runs go without $(GO_BUILD_FLAGS) (or $(TEST_BUILD), which holds it), so it compiles every package again:\n%s", i+1, line)
		}
	}
	if checked < 20 {
		t.Errorf("found only %d go commands in the Makefile; the pattern no longer matches its recipes", checked)
	}
	if !regexp.MustCompile(`(?m)^TEST_BUILD\s*=.*\$\(GO_BUILD_FLAGS\)`).MatchString(makefile) {
		t.Errorf("Makefile: TEST_BUILD does not hold $(GO_BUILD_FLAGS)")
	}

	if install := repoFile(t, "action/install.sh"); !strings.Contains(install, `s/^GO_BUILD_FLAGS := //p`) {
		t.Errorf("action/install.sh's source build does not read GO_BUILD_FLAGS from the Makefile")
	}
}
