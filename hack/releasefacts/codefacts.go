package main

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/printer"
	"go/token"
	"path"
	"slices"
	"strconv"
	"strings"

	"github.com/karpgate/karpgate/internal/karpenter/release"
)

// separateHashes finds the fields the AWS provider drifts through a hash of
// their own, outside (*EC2NodeClass).Hash: a method is<Type>Drifted of
// pkg/cloudprovider that compares hashes, where <Type> is the type of an
// EC2NodeClass spec field (Karpenter v1.0 drifted the kubelet block so).
func separateHashes(files map[string][]byte, p *goPackage) ([]release.HashInput, error) {
	spec := p.structs["EC2NodeClassSpec"]
	if spec == nil {
		return nil, fmt.Errorf("no struct EC2NodeClassSpec")
	}
	fset := token.NewFileSet()
	var inputs []release.HashInput
	for _, name := range sortedNames(files, "pkg/cloudprovider") {
		f, err := parser.ParseFile(fset, name, files[name], parser.SkipObjectResolution)
		if err != nil {
			return nil, err
		}
		for _, decl := range f.Decls {
			fd, ok := decl.(*ast.FuncDecl)
			if !ok || fd.Body == nil || !strings.HasPrefix(fd.Name.Name, "is") || !strings.HasSuffix(fd.Name.Name, "Drifted") {
				continue
			}
			typ := strings.TrimSuffix(strings.TrimPrefix(fd.Name.Name, "is"), "Drifted")
			var body strings.Builder
			_ = printer.Fprint(&body, fset, fd.Body)
			if !strings.Contains(body.String(), "Hash") {
				continue
			}
			for _, field := range spec.Fields.List {
				if len(field.Names) == 1 && localType(field.Type) == typ {
					inputs = append(inputs, release.HashInput{Expr: "(*CloudProvider)." + fd.Name.Name, Path: "spec." + jsonName(field), How: "its own hash"})
				}
			}
		}
	}
	return inputs, nil
}

func sortedNames(files map[string][]byte, dir string) []string {
	var names []string
	for name := range files {
		if path.Dir(name) == dir && strings.HasSuffix(name, ".go") && !strings.HasSuffix(name, "_test.go") {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	return names
}

// driftReasons reads the AWS provider's drift reasons: the constants of
// type cloudprovider.DriftReason in pkg/cloudprovider.
func driftReasons(files map[string][]byte) ([]string, error) {
	fset := token.NewFileSet()
	var reasons []string
	for name, data := range files {
		if path.Dir(name) != "pkg/cloudprovider" || !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, data, parser.SkipObjectResolution)
		if err != nil {
			return nil, err
		}
		for _, decl := range f.Decls {
			gd, ok := decl.(*ast.GenDecl)
			if !ok || gd.Tok != token.CONST {
				continue
			}
			for _, spec := range gd.Specs {
				vs := spec.(*ast.ValueSpec)
				if sel, ok := vs.Type.(*ast.SelectorExpr); !ok || sel.Sel.Name != "DriftReason" {
					continue
				}
				for _, v := range vs.Values {
					if lit, ok := v.(*ast.BasicLit); ok && lit.Kind == token.STRING {
						s, _ := strconv.Unquote(lit.Value)
						reasons = append(reasons, s)
					}
				}
			}
		}
	}
	if len(reasons) == 0 {
		return nil, fmt.Errorf("pkg/cloudprovider declares no cloudprovider.DriftReason constant")
	}
	slices.Sort(reasons)
	return reasons, nil
}

// doNotDisruptDurations reports whether core reads karpenter.sh/
// do-not-disrupt as a duration: a function of pkg/utils/pod that reads the
// annotation's key and calls time.ParseDuration.
func doNotDisruptDurations(files map[string][]byte) bool {
	for name, data := range files {
		if path.Dir(name) != "pkg/utils/pod" || strings.HasSuffix(name, "_test.go") || !strings.HasSuffix(name, ".go") {
			continue
		}
		src := string(data)
		if strings.Contains(src, "DoNotDisruptAnnotationKey") && strings.Contains(src, "time.ParseDuration") {
			return true
		}
	}
	return false
}
