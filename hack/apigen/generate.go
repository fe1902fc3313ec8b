package main

import (
	"bytes"
	"fmt"
	"io"
	"path"
	"path/filepath"
	"regexp"
	"strings"

	"golang.org/x/tools/go/packages"
	"sigs.k8s.io/controller-tools/pkg/crd"
	"sigs.k8s.io/controller-tools/pkg/deepcopy"
	"sigs.k8s.io/controller-tools/pkg/genall"
	"sigs.k8s.io/controller-tools/pkg/loader"
)

// APIPackages are the packages whose types are generated from, relative
// to the repository root; CRDDir is where their CRDs go.
const (
	APIPackages = "./api/..."
	CRDDir      = "api/karpgate/crds"
)

// versionAnnotation is the metadata controller-gen stamps on each CRD.
var versionAnnotation = regexp.MustCompile(`(?m)^  annotations:\n    controller-gen\.kubebuilder\.io/version: .*\n`)

// Generate runs the deepcopy and CRD generators on the API packages under
// root and returns each file they write, by slash path relative to root.
func Generate(root string) (map[string][]byte, error) {
	absRoot, err := filepath.Abs(root)
	if err != nil {
		return nil, err
	}
	var objectGen genall.Generator = deepcopy.Generator{}
	var crdGen genall.Generator = crd.Generator{}
	gens := genall.Generators{&objectGen, &crdGen}
	rt, err := gens.ForRootsWithConfig(&packages.Config{Dir: absRoot}, APIPackages)
	if err != nil {
		return nil, fmt.Errorf("loading %s: %w", APIPackages, err)
	}
	out := &memory{root: absRoot, files: map[string]*bytes.Buffer{}}
	rt.OutputRules = genall.OutputRules{Default: out}
	var errs bytes.Buffer
	rt.ErrorWriter = &errs
	if rt.Run() {
		return nil, fmt.Errorf("controller-tools failed:\n%s", errs.String())
	}
	files := make(map[string][]byte, len(out.files))
	for p, b := range out.files {
		data := b.Bytes()
		if strings.HasSuffix(p, ".yaml") {
			// The annotation names the generator's build ("(devel)" under
			// go run), which says nothing about the CRD.
			data = versionAnnotation.ReplaceAll(data, nil)
		}
		files[p] = data
	}
	return files, nil
}

// memory collects the generators' output: Go code next to its package,
// CRDs in CRDDir.
type memory struct {
	root  string
	files map[string]*bytes.Buffer
}

func (m *memory) Open(pkg *loader.Package, item string) (io.WriteCloser, error) {
	var p string
	if pkg == nil {
		p = path.Join(CRDDir, item)
	} else {
		if len(pkg.CompiledGoFiles) == 0 {
			return nil, fmt.Errorf("package %s has no files on disk", pkg.PkgPath)
		}
		rel, err := filepath.Rel(m.root, filepath.Dir(pkg.CompiledGoFiles[0]))
		if err != nil {
			return nil, err
		}
		p = path.Join(filepath.ToSlash(rel), item)
	}
	b := &bytes.Buffer{}
	m.files[p] = b
	return nopCloser{b}, nil
}

type nopCloser struct{ io.Writer }

func (nopCloser) Close() error { return nil }
