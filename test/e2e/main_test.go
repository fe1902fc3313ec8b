package e2e

import (
	"os"
	"testing"

	"github.com/karpgate/karpgate/test/gobuild"
)

func TestMain(m *testing.M) {
	code := m.Run()
	gobuild.Cleanup()
	os.Exit(code)
}
