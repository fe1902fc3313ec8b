package karpenterstack

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/karpgate/karpgate/internal/devcluster/crdsource"
)

// The releases `make tools` builds; binaries_test.go keeps them equal to the
// Makefile and the build-only modules under hack/.
const (
	// KarpenterVersion is sigs.k8s.io/karpenter, whose kwok provider runs:
	// the last release serving v1beta1, as crdsource.KarpenterV1_0_8.
	KarpenterVersion = "v1.0.8"
	// KwokVersion is sigs.k8s.io/kwok.
	KwokVersion = "v0.8.0"
)

// Environment variables that override where the binaries are; the Makefile
// sets them to what it built.
const (
	KarpenterEnv = "KARPGATE_KARPENTER"
	KwokEnv      = "KARPGATE_KWOK"
)

// Binaries are the programs the stack runs.
type Binaries struct {
	Scheduler, ControllerManager, Karpenter, Kwok string
}

// FindBinaries looks for kube-scheduler and kube-controller-manager in
// assetsDir (the folder of kube-apiserver), and for Karpenter and kwok in
// $KARPGATE_KARPENTER and $KARPGATE_KWOK or under the checkout's bin/, where
// `make tools` builds them. It names every missing one.
func FindBinaries(assetsDir string) (Binaries, error) {
	b := Binaries{
		Scheduler:         filepath.Join(assetsDir, "kube-scheduler"),
		ControllerManager: filepath.Join(assetsDir, "kube-controller-manager"),
		Karpenter:         os.Getenv(KarpenterEnv),
		Kwok:              os.Getenv(KwokEnv),
	}
	if b.Karpenter == "" || b.Kwok == "" {
		root, err := crdsource.RepoRoot()
		if err != nil {
			return b, err
		}
		if b.Karpenter == "" {
			b.Karpenter = filepath.Join(root, "bin", "karpenter", KarpenterVersion, "karpenter")
		}
		if b.Kwok == "" {
			b.Kwok = filepath.Join(root, "bin", "kwok", KwokVersion, "kwok")
		}
	}
	var missing []error
	for _, path := range []string{b.Scheduler, b.ControllerManager, b.Karpenter, b.Kwok} {
		if st, err := os.Stat(path); err != nil || st.IsDir() {
			missing = append(missing, fmt.Errorf("%s is missing", path))
		}
	}
	if len(missing) > 0 {
		return b, fmt.Errorf("the simulated-node stack needs binaries `make tools` builds (run it, or `make run`/`make test`, which build them): %w", errors.Join(missing...))
	}
	return b, nil
}
