package e2e

import (
	"fmt"
	"os"
	"testing"

	"github.com/karpgate/karpgate/test/gobuild"
	"github.com/karpgate/karpgate/test/testenv"
)

func TestMain(m *testing.M) {
	cleanCache, err := testenv.IsolateKubectlCache()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	code := m.Run()
	gobuild.Cleanup()
	cleanCache()
	os.Exit(code)
}
