// Package crdsource reads real CRD manifests (Karpenter's, and cert-manager's
// for the install manifests) from the Go module cache. The project never
// copies them: each set is pinned by a tiny module
// under hack/crds/<set> whose go.sum fixes the exact bytes. `go mod download`
// fetches the module zip; this package checks the zip against the pinned hash
// itself and reads the YAML straight out of it.
//
// Reading the zip rather than the unpacked folder matters: newer Karpenter
// releases declare a newer Go patch release than the local toolchain, and `go
// mod download` then reports an error after fetching, without a folder.
package crdsource

import (
	"archive/zip"
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"golang.org/x/mod/modfile"
	"golang.org/x/mod/sumdb/dirhash"
)

// Set names one pinned CRD set.
type Set string

const (
	// KarpenterV1_0_8 serves v1beta1 and v1 with a conversion webhook: the
	// last Karpenter release that still converts.
	KarpenterV1_0_8 Set = "karpenter-v1.0.8"
	// KarpenterV1_15_1 serves v1 only, as clusters run today.
	KarpenterV1_15_1 Set = "karpenter-v1.15.1"
	// CertManagerV1_21_2 holds the Issuer, Certificate and other
	// cert-manager.io kinds the install manifests create. Its deploy/crds/
	// folder is what cert-manager's Helm chart templates its CRDs from: the
	// versions and schemas are the same, only the chart's labels differ.
	CertManagerV1_21_2 Set = "cert-manager-v1.21.2"
	// PrometheusOperatorV0_93_1 holds the ServiceMonitor and PrometheusRule
	// kinds of the monitoring manifests, at the version of the API types
	// they are built from.
	PrometheusOperatorV0_93_1 Set = "prometheus-operator-v0.93.1"
	// KarpenterKwokV1_0_8 holds the KWOKNodeClass of Karpenter's kwok
	// provider (sigs.k8s.io/karpenter, the same release as KarpenterV1_0_8):
	// the node class of the simulated nodes `karpgate run` and the Karpenter
	// e2e tests launch.
	KarpenterKwokV1_0_8 Set = "karpenter-kwok-v1.0.8"
	// KarpenterKwokV1_15_0 is the KWOKNodeClass of Karpenter v1.15.0's kwok
	// provider, the newest release, which runs on KarpenterV1_15_1's CRDs
	// (the aws provider's v1.15.1 patch release ships core v1.15.0's API).
	KarpenterKwokV1_15_0 Set = "karpenter-kwok-v1.15.0"
	// ArgoCDV3_6_1 holds the Application kind of Argo CD, which
	// docs/gitops.md creates.
	ArgoCDV3_6_1 Set = "argo-cd-v3.6.1"
	// FluxKustomizeControllerV1_10_1 holds Flux's Kustomization kind,
	// which docs/gitops.md creates.
	FluxKustomizeControllerV1_10_1 Set = "flux-kustomize-controller-v1.10.1"
	// FluxSourceControllerV1_10_1 holds Flux's GitRepository kind, which
	// docs/gitops.md creates.
	FluxSourceControllerV1_10_1 Set = "flux-source-controller-v1.10.1"
	// OpenReports holds the openreports.io Report and ClusterReport CRDs
	// the audit of stored objects writes, from the module whose Go types
	// karpgate links (github.com/openreports/reports-api): pinned by
	// karpgate's own go.mod and go.sum, so the CRDs always match the types.
	OpenReports Set = "openreports"
)

// linkedSets come from a module karpgate's go.mod requires rather than
// from a pin under hack/crds: the module path and folder.
var linkedSets = map[Set][2]string{
	OpenReports: {"github.com/openreports/reports-api", "config/crd"},
}

// subdirs says where in each pinned module the CRDs live.
var subdirs = map[Set]string{
	KarpenterV1_0_8:    "pkg/apis/crds",
	KarpenterV1_15_1:   "pkg/apis/crds",
	CertManagerV1_21_2: "deploy/crds",
	// The folder has every monitoring.coreos.com kind; onlyFiles keeps the
	// two karpgate creates (the others are megabytes each).
	PrometheusOperatorV0_93_1:      "example/prometheus-operator-crd",
	KarpenterKwokV1_0_8:            "kwok/apis/crds",
	KarpenterKwokV1_15_0:           "kwok/apis/crds",
	ArgoCDV3_6_1:                   "manifests/crds",
	FluxKustomizeControllerV1_10_1: "config/crd/bases",
	FluxSourceControllerV1_10_1:    "config/crd/bases",
}

// onlyFiles limits a set to some files of its folder.
var onlyFiles = map[Set][]string{
	PrometheusOperatorV0_93_1: {"monitoring.coreos.com_prometheusrules.yaml", "monitoring.coreos.com_servicemonitors.yaml"},
	// The folder also holds a kustomization.yaml, which is no CRD.
	ArgoCDV3_6_1:                {"application-crd.yaml"},
	FluxSourceControllerV1_10_1: {"source.toolkit.fluxcd.io_gitrepositories.yaml"},
}

// File is one CRD manifest file.
type File struct {
	Name string // e.g. "github.com/aws/karpenter-provider-aws@v1.0.8/pkg/apis/crds/karpenter.sh_nodepools.yaml"
	Data []byte
}

// Pin is the module version and hash a set is fixed to.
type Pin struct {
	Module, Version, Hash string
}

// Files returns the CRD YAML files of set, sorted by name.
func Files(ctx context.Context, set Set) ([]File, error) {
	if linked, ok := linkedSets[set]; ok {
		return LinkedFiles(ctx, linked[0], linked[1])
	}
	subdir, ok := subdirs[set]
	if !ok {
		return nil, fmt.Errorf("unknown CRD set %q", set)
	}
	root, err := RepoRoot()
	if err != nil {
		return nil, err
	}
	files, err := filesFromPin(ctx, filepath.Join(root, "hack", "crds", string(set)), subdir)
	if err != nil || onlyFiles[set] == nil {
		return files, err
	}
	var kept []File
	for _, f := range files {
		if slices.Contains(onlyFiles[set], path.Base(f.Name)) {
			kept = append(kept, f)
		}
	}
	if len(kept) != len(onlyFiles[set]) {
		return nil, fmt.Errorf("CRD set %s: found %d of the files %v", set, len(kept), onlyFiles[set])
	}
	return kept, nil
}

// filesFromPin reads the CRDs under subdir of the module pinned in pinDir.
func filesFromPin(ctx context.Context, pinDir, subdir string) ([]File, error) {
	pin, err := ReadPin(filepath.Join(pinDir, "go.sum"))
	if err != nil {
		return nil, err
	}
	return filesOf(ctx, pinDir, pin, subdir)
}

// LinkedFiles returns the YAML files directly under subdir of a module the
// karpgate module itself requires, at the version its go.mod names and
// checked against its go.sum: what a linked module ships besides Go code,
// such as the examples of the Karpenter release whose CRDs lint links.
func LinkedFiles(ctx context.Context, module, subdir string) ([]File, error) {
	root, err := RepoRoot()
	if err != nil {
		return nil, err
	}
	data, err := os.ReadFile(filepath.Join(root, "go.mod"))
	if err != nil {
		return nil, err
	}
	mod, err := modfile.ParseLax("go.mod", data, nil)
	if err != nil {
		return nil, err
	}
	version := ""
	for _, r := range mod.Require {
		if r.Mod.Path == module {
			version = r.Mod.Version
		}
	}
	if version == "" {
		return nil, fmt.Errorf("go.mod does not require %s", module)
	}
	pin, err := readSum(filepath.Join(root, "go.sum"), module, version)
	if err != nil {
		return nil, err
	}
	return filesOf(ctx, root, pin, subdir)
}

// readSum finds the module hash line of module@version in a go.sum.
func readSum(goSum, module, version string) (Pin, error) {
	data, err := os.ReadFile(goSum)
	if err != nil {
		return Pin{}, err
	}
	for _, line := range strings.Split(string(data), "\n") {
		if fields := strings.Fields(line); len(fields) == 3 && fields[0] == module && fields[1] == version {
			return Pin{Module: module, Version: version, Hash: fields[2]}, nil
		}
	}
	return Pin{}, fmt.Errorf("%s has no hash for %s %s", goSum, module, version)
}

// filesOf downloads the module a pin names, checks its zip against the
// pinned hash and reads the YAML files under subdir.
func filesOf(ctx context.Context, dir string, pin Pin, subdir string) ([]File, error) {
	zipPath, err := ModuleZip(ctx, dir, pin)
	if err != nil {
		return nil, err
	}
	return readZip(zipPath, pin.Module+"@"+pin.Version+"/"+subdir+"/")
}

// ModuleZip downloads the module zip a pin names into the module cache
// (running `go mod download` in dir, a pin's folder), checks it against the
// pinned hash and returns its path.
func ModuleZip(ctx context.Context, dir string, pin Pin) (string, error) {
	zipPath, err := download(ctx, dir, pin)
	if err != nil {
		return "", err
	}
	hash, err := dirhash.HashZip(zipPath, dirhash.Hash1)
	if err != nil {
		return "", fmt.Errorf("hashing %s: %w", zipPath, err)
	}
	if hash != pin.Hash {
		return "", fmt.Errorf("%s@%s in the module cache hashes to %s, but %s pins %s", pin.Module, pin.Version, hash, filepath.Join(dir, "go.sum"), pin.Hash)
	}
	return zipPath, nil
}

// ReadPin reads the module line (not the /go.mod line) of a pin's go.sum.
func ReadPin(goSum string) (Pin, error) {
	f, err := os.Open(goSum)
	if err != nil {
		return Pin{}, fmt.Errorf("CRD pin: %w", err)
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	for s.Scan() {
		fields := strings.Fields(s.Text())
		if len(fields) == 3 && !strings.HasSuffix(fields[1], "/go.mod") {
			return Pin{Module: fields[0], Version: fields[1], Hash: fields[2]}, nil
		}
	}
	return Pin{}, fmt.Errorf("CRD pin %s: no module hash line", goSum)
}

func download(ctx context.Context, dir string, pin Pin) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "go", "mod", "download", "-json", pin.Module+"@"+pin.Version)
	cmd.Dir = dir
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	runErr := cmd.Run()
	var info struct{ Zip, Error string }
	if err := json.Unmarshal(stdout.Bytes(), &info); err != nil || info.Zip == "" {
		return "", fmt.Errorf("go mod download %s@%s: %w %s %s", pin.Module, pin.Version, runErr, info.Error, stderr.String())
	}
	// An Error next to a Zip is the toolchain-version complaint explained in
	// the package doc; the hash check that follows is what guards content.
	if _, err := os.Stat(info.Zip); err != nil {
		return "", fmt.Errorf("go mod download %s@%s: %s: %w", pin.Module, pin.Version, info.Error, err)
	}
	return info.Zip, nil
}

func readZip(zipPath, prefix string) ([]File, error) {
	zr, err := zip.OpenReader(zipPath)
	if err != nil {
		return nil, err
	}
	defer zr.Close()
	var files []File
	for _, f := range zr.File {
		if !strings.HasPrefix(f.Name, prefix) || path.Dir(f.Name)+"/" != prefix || path.Ext(f.Name) != ".yaml" {
			continue
		}
		rc, err := f.Open()
		if err != nil {
			return nil, err
		}
		data, err := io.ReadAll(rc)
		rc.Close()
		if err != nil {
			return nil, err
		}
		files = append(files, File{Name: f.Name, Data: data})
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("%s: no YAML under %s", zipPath, prefix)
	}
	sort.Slice(files, func(i, j int) bool { return files[i].Name < files[j].Name })
	return files, nil
}

// RepoRoot finds the karpgate checkout by walking up from the working
// directory to the folder that holds hack/crds and go.mod.
func RepoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if st, err := os.Stat(filepath.Join(dir, "hack", "crds")); err == nil && st.IsDir() {
			if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
				return dir, nil
			}
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("not inside a karpgate checkout: no hack/crds folder above the working directory")
		}
		dir = parent
	}
}
