// Command releasefacts writes internal/karpenter/release/releases.json, the
// facts of every Karpenter release pinned under hack/releases/<version>:
// what its CRDs state (read from their YAML) and what only its Go code holds
// (hash tags and versions, drift reasons, do-not-disrupt durations; read
// with go/parser). It reads the module zips from the Go module cache,
// downloading them with `go mod download` and checking each against its
// pin, and copies no Karpenter code or YAML: only the facts.
//
//	go run ./hack/releasefacts          # rewrite the table (make release-facts)
//	go run ./hack/releasefacts -check   # exit 1 when the table is stale
//
// TestTableIsUpToDate runs the same check under go test.
package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"github.com/karpgate/karpgate/internal/devcluster/crdsource"
)

// tablePath is where the table lives, from the repository root.
const tablePath = "internal/karpenter/release/releases.json"

func main() {
	check := flag.Bool("check", false, "exit 1 when the checked-in table differs from a fresh one instead of writing it")
	flag.Parse()
	if err := run(context.Background(), *check); err != nil {
		fmt.Fprintln(os.Stderr, "releasefacts:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, check bool) error {
	root, err := crdsource.RepoRoot()
	if err != nil {
		return err
	}
	fresh, err := Generate(ctx, root)
	if err != nil {
		return err
	}
	path := filepath.Join(root, tablePath)
	if check {
		current, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if !bytes.Equal(current, fresh) {
			return fmt.Errorf("%s is stale: run make release-facts", tablePath)
		}
		return nil
	}
	return os.WriteFile(path, fresh, 0o644)
}
