package policies

import (
	"bytes"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/open-policy-agent/opa/v1/ast"
	"github.com/open-policy-agent/opa/v1/loader"
	"go.yaml.in/yaml/v3"

	"github.com/karpgate/karpgate/internal/manifest"
)

//go:embed rules
var builtinRules embed.FS

// BuiltinFilePrefix starts the file name of every built-in rule, library
// and Rego test, in Rule.File, test results and error messages:
// "builtin:rules/ami/latest.rego" is policies/rules/ami/latest.rego as
// embedded in the binary.
const BuiltinFilePrefix = "builtin:"

// policySet is everything compiled together: modules by file name, the
// rule catalog read from them, and the user's data documents.
type policySet struct {
	modules map[string]*ast.Module
	catalog Catalog
	data    map[string]any
	// userFiles are the --policy files, in load order.
	userFiles []string
}

// reservedPackages may not be defined by user policies: the engine writes
// data.karpgate.config and data.karpgate.engine, and the built-in library
// and rules must stay as shipped.
var reservedPackages = []ast.Ref{
	ast.MustParseRef("data.karpgate.lib"),
	ast.MustParseRef("data.karpgate.config"),
	ast.MustParseRef("data.karpgate.engine"),
}

// BuiltinFiles are the built-in rules as embedded, under rules/: the Rego
// and, for policies/twin, the CEL twins beside it and lib/lib.cel.
func BuiltinFiles() fs.FS { return builtinRules }

// twinSuffix names a rule's CEL twin: rules/ami/latest.cel beside
// rules/ami/latest.rego.
const twinSuffix = ".cel"

// BuiltinCatalog returns the catalog of the built-in rules alone.
func BuiltinCatalog() (Catalog, error) {
	set, err := loadPolicySet(nil, nil, false)
	if err != nil {
		return nil, err
	}
	return set.catalog, nil
}

// loadPolicySet parses the built-in rules and the user's policy folders
// (with their _test.rego files when withTests) and reads the data folders.
func loadPolicySet(policyDirs, dataDirs []string, withTests bool) (*policySet, error) {
	set := &policySet{modules: map[string]*ast.Module{}}
	builtinPackages := map[string]bool{}
	err := fs.WalkDir(builtinRules, "rules", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !wantRego(p, withTests) {
			return err
		}
		src, err := builtinRules.ReadFile(p)
		if err != nil {
			return err
		}
		m, err := set.add(BuiltinFilePrefix+p, src, true)
		if err == nil {
			builtinPackages[m.Package.Path.String()] = true
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	for _, dir := range policyDirs {
		files, err := regoFiles(dir, withTests)
		if err != nil {
			return nil, err
		}
		for _, file := range files {
			src, err := os.ReadFile(file)
			if err != nil {
				return nil, fmt.Errorf("--policy %s: %w", dir, err)
			}
			m, err := set.add(file, src, false)
			if err != nil {
				return nil, err
			}
			set.userFiles = append(set.userFiles, file)
			if err := checkUserPackage(file, m.Package.Path, builtinPackages); err != nil {
				return nil, err
			}
		}
	}
	for i, r := range set.catalog {
		twin := strings.TrimSuffix(strings.TrimPrefix(r.File, BuiltinFilePrefix), ".rego") + twinSuffix
		if _, err := fs.Stat(builtinRules, twin); r.Builtin && err == nil {
			set.catalog[i].TwinFile = twin
		}
	}
	slices.SortStableFunc(set.catalog, func(a, b Rule) int { return strings.Compare(a.ID, b.ID) }) // stable: a duplicate ID names the files in load order
	for i := 1; i < len(set.catalog); i++ {
		if a, b := set.catalog[i-1], set.catalog[i]; a.ID == b.ID {
			return nil, fmt.Errorf("rule ID %s is used by both %s (%s) and %s (%s); rule IDs must be unique", a.ID, a.Package, a.File, b.Package, b.File)
		}
	}
	if set.data, err = loadData(dataDirs); err != nil {
		return nil, err
	}
	return set, nil
}

func wantRego(p string, withTests bool) bool {
	return strings.HasSuffix(p, ".rego") && (withTests || !strings.HasSuffix(p, "_test.rego"))
}

func (s *policySet) add(name string, src []byte, builtin bool) (*ast.Module, error) {
	m, err := ast.ParseModuleWithOpts(name, string(src), ast.ParserOptions{ProcessAnnotation: true, RegoVersion: ast.RegoV1})
	if err != nil && !builtin {
		// Policies written for conftest before Rego v1 (deny[msg] { ... })
		// load as they are: OPA compiles v0 modules beside v1 ones.
		if v0, v0err := ast.ParseModuleWithOpts(name, string(src), ast.ParserOptions{ProcessAnnotation: true, RegoVersion: ast.RegoV0}); v0err == nil {
			m, err = v0, nil
		}
	}
	if err != nil {
		return nil, fmt.Errorf("policy %s: %w", name, err)
	}
	s.modules[name] = m
	if strings.HasSuffix(name, "_test.rego") {
		return m, nil // tests live in their rule's package but carry no metadata
	}
	r, isRule, err := ruleFromModule(name, m, builtin)
	if err != nil {
		return nil, err
	}
	if isRule {
		s.catalog = append(s.catalog, r)
	}
	return m, nil
}

func checkUserPackage(file string, pkg ast.Ref, builtinPackages map[string]bool) error {
	for _, reserved := range reservedPackages {
		if pkg.HasPrefix(reserved) {
			return fmt.Errorf("%s: package %s is reserved for karpgate; put user libraries under another name, like data.acme.lib", file, pkg)
		}
	}
	if builtinPackages[pkg.String()] && !strings.HasSuffix(file, "_test.rego") {
		return fmt.Errorf("%s: package %s is a built-in rule; a user rule needs its own package under data.karpgate.rules", file, pkg)
	}
	return nil
}

// regoFiles lists the .rego files under dir, recursively and sorted.
func regoFiles(dir string, withTests bool) ([]string, error) {
	info, err := os.Stat(dir)
	if err != nil {
		return nil, fmt.Errorf("--policy %s: %w", dir, err)
	}
	if !info.IsDir() {
		return []string{dir}, nil
	}
	var files []string
	err = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && p != dir && strings.HasPrefix(d.Name(), ".") {
			return filepath.SkipDir
		}
		if !d.IsDir() && wantRego(p, withTests) {
			files = append(files, p)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("--policy %s: %w", dir, err)
	}
	slices.Sort(files)
	return files, nil
}

// loadData reads JSON and YAML files from the data folders the way `opa
// eval --data` does: a file's content is placed at the path of its folder
// relative to the folder given.
func loadData(dirs []string) (map[string]any, error) {
	if len(dirs) == 0 {
		return map[string]any{}, nil
	}
	for _, dir := range dirs {
		if _, err := os.Stat(dir); err != nil {
			return nil, fmt.Errorf("--data %s: %w", dir, err)
		}
	}
	onlyData := func(abspath string, info fs.FileInfo, _ int) bool {
		if info.IsDir() {
			return strings.HasPrefix(info.Name(), ".") && info.Name() != "." && info.Name() != ".."
		}
		switch strings.ToLower(path.Ext(abspath)) {
		case ".json", ".yaml", ".yml":
			return false
		}
		return true
	}
	if err := checkDataAliases(dirs); err != nil {
		return nil, err
	}
	result, err := loader.NewFileLoader().Filtered(dirs, onlyData)
	if err != nil {
		return nil, fmt.Errorf("--data: %w", err)
	}
	if _, clash := result.Documents["karpgate"]; clash {
		return nil, fmt.Errorf("--data: the top-level key \"karpgate\" is reserved for karpgate's configuration; move that data under another name")
	}
	return result.Documents, nil
}

// checkDataAliases refuses a YAML data file whose aliases expand past
// manifest.MaxAliasNodes before OPA's loader, which expands every alias,
// reads it.
func checkDataAliases(dirs []string) error {
	for _, dir := range dirs {
		err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
			switch {
			case err != nil:
				return err
			case d.IsDir() && p != dir && strings.HasPrefix(d.Name(), "."):
				return filepath.SkipDir
			case d.IsDir():
				return nil
			}
			if ext := strings.ToLower(path.Ext(p)); ext != ".yaml" && ext != ".yml" {
				return nil
			}
			data, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			dec := yaml.NewDecoder(bytes.NewReader(data))
			for {
				var doc yaml.Node
				if err := dec.Decode(&doc); err != nil {
					return nil //nolint:nilerr // not YAML the check can read: the loader reports it
				}
				if err := manifest.CheckAliases(&doc, 0); err != nil {
					line := 0
					if ae := (*manifest.AliasError)(nil); errors.As(err, &ae) {
						line = ae.Line
					}
					return fmt.Errorf("--data %s:%d: %w", p, line, err)
				}
			}
		})
		if err != nil {
			return err
		}
	}
	return nil
}
