package karpenterstack

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/karpgate/karpgate/internal/devcluster/crdsource"
)

// KwokVersion is sigs.k8s.io/kwok's, the controller that plays the kubelet
// of every simulated node; binaries_test.go keeps it equal to the Makefile
// and hack/harness. Karpenter v1.15.0's own kwok install pins the same release.
const KwokVersion = "v0.8.0"

// Environment variables that override where the binaries are; the Makefile
// sets them to what it built. Karpenter's folder holds one folder per
// release, <version>/karpenter.
const (
	KarpenterDirEnv = "KARPGATE_KARPENTER_DIR"
	KwokEnv         = "KARPGATE_KWOK"
)

// Binaries are the programs the stack runs.
type Binaries struct {
	Scheduler, ControllerManager, Karpenter, Kwok string
}

// FindBinaries looks for kube-scheduler and kube-controller-manager in
// assetsDir (the folder of kube-apiserver), for the kwok provider of
// release in $KARPGATE_KARPENTER_DIR/<version>/ and for kwok in
// $KARPGATE_KWOK, or else under the checkout's bin/, where `make tools`
// builds them. It names every missing one.
func FindBinaries(assetsDir string, release Release) (Binaries, error) {
	b := Binaries{
		Scheduler:         filepath.Join(assetsDir, "kube-scheduler"),
		ControllerManager: filepath.Join(assetsDir, "kube-controller-manager"),
		Kwok:              os.Getenv(KwokEnv),
	}
	if dir := os.Getenv(KarpenterDirEnv); dir != "" {
		b.Karpenter = filepath.Join(dir, release.Version, "karpenter")
	}
	if b.Karpenter == "" || b.Kwok == "" {
		root, err := crdsource.RepoRoot()
		if err != nil {
			return b, err
		}
		if b.Karpenter == "" {
			b.Karpenter = filepath.Join(root, "bin", "karpenter", release.Version, "karpenter")
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
		return b, fmt.Errorf("the simulated-node stack of Karpenter %s needs binaries `make tools` builds (run it, or `make run KARPENTER_VERSION=%s`/`make test`, which build them): %w", release.Version, release.Version, errors.Join(missing...))
	}
	return b, nil
}
