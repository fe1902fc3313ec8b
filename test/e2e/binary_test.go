package e2e

import (
	"testing"

	"github.com/karpgate/karpgate/test/gobuild"
)

// buildKarpgate builds the shipped karpgate binary, once per test run.
func buildKarpgate(t *testing.T) string {
	t.Helper()
	return gobuild.Command(t, "github.com/karpgate/karpgate/cmd/karpgate")
}

// buildKarpgateDev builds karpgate-dev, the shipped commands plus `run`,
// once per test run.
func buildKarpgateDev(t *testing.T) string {
	t.Helper()
	return gobuild.Command(t, "github.com/karpgate/karpgate/cmd/karpgate-dev")
}
