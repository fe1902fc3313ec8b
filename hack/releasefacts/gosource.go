package main

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"path"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"github.com/karpgate/karpgate/internal/karpenter/release"
)

// goPackage is one parsed package of a module: its struct types, string
// constants and methods, enough to follow a Hash method.
type goPackage struct {
	fset    *token.FileSet
	structs map[string]*ast.StructType
	consts  map[string]string
	methods map[string]*ast.FuncDecl // "Type.Method"
}

func parsePackage(files map[string][]byte, dir string) (*goPackage, error) {
	p := &goPackage{fset: token.NewFileSet(), structs: map[string]*ast.StructType{}, consts: map[string]string{}, methods: map[string]*ast.FuncDecl{}}
	var names []string
	for name := range files {
		if path.Dir(name) == dir && strings.HasSuffix(name, ".go") && !strings.HasSuffix(name, "_test.go") {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	if len(names) == 0 {
		return nil, fmt.Errorf("no Go files in %s", dir)
	}
	for _, name := range names {
		f, err := parser.ParseFile(p.fset, name, files[name], parser.SkipObjectResolution)
		if err != nil {
			return nil, err
		}
		for _, decl := range f.Decls {
			switch d := decl.(type) {
			case *ast.GenDecl:
				p.addGenDecl(d)
			case *ast.FuncDecl:
				if recv := receiverType(d); recv != "" {
					p.methods[recv+"."+d.Name.Name] = d
				}
			}
		}
	}
	return p, nil
}

func (p *goPackage) addGenDecl(d *ast.GenDecl) {
	for _, spec := range d.Specs {
		switch s := spec.(type) {
		case *ast.TypeSpec:
			if st, ok := s.Type.(*ast.StructType); ok {
				p.structs[s.Name.Name] = st
			}
		case *ast.ValueSpec:
			if d.Tok != token.CONST {
				continue
			}
			for i, name := range s.Names {
				if i < len(s.Values) {
					if lit, ok := s.Values[i].(*ast.BasicLit); ok && lit.Kind == token.STRING {
						p.consts[name.Name], _ = strconv.Unquote(lit.Value)
					}
				}
			}
		}
	}
}

func receiverType(d *ast.FuncDecl) string {
	if d.Recv == nil || len(d.Recv.List) != 1 {
		return ""
	}
	t := d.Recv.List[0].Type
	if star, ok := t.(*ast.StarExpr); ok {
		t = star.X
	}
	if id, ok := t.(*ast.Ident); ok {
		return id.Name
	}
	return ""
}

// hashFacts reads how kind is hashed: its <Kind>HashVersion constant and
// the hashstructure.Hash call of its Hash method, followed through the
// package's struct types for `hash:"ignore"` tags.
func hashFacts(files map[string][]byte, dir, kind string) (*release.Hash, error) {
	p, err := parsePackage(files, dir)
	if err != nil {
		return nil, err
	}
	h := &release.Hash{Version: p.consts[kind+"HashVersion"]}
	if h.Version == "" {
		return nil, fmt.Errorf("%s: no constant %sHashVersion", dir, kind)
	}
	method := p.methods[kind+".Hash"]
	if method == nil {
		return nil, fmt.Errorf("%s: no method (*%s).Hash", dir, kind)
	}
	recv := method.Recv.List[0].Names[0].Name
	call := findHashCall(method.Body)
	if call == nil || len(call.Args) < 1 {
		return nil, fmt.Errorf("%s: (*%s).Hash calls no hashstructure.Hash", dir, kind)
	}
	args := []ast.Expr{call.Args[0]}
	if lit, ok := call.Args[0].(*ast.CompositeLit); ok {
		args = lit.Elts
	}
	for _, arg := range args {
		if err := p.addHashInput(h, kind, recv, arg); err != nil {
			return nil, fmt.Errorf("%s: (*%s).Hash: %w", dir, kind, err)
		}
	}
	if len(call.Args) >= 3 {
		p.readHashOptions(h, call.Args[2])
	}
	if kind == "EC2NodeClass" {
		more, err := separateHashes(files, p)
		if err != nil {
			return nil, err
		}
		h.Inputs = append(h.Inputs, more...)
	}
	return h, nil
}

func findHashCall(body *ast.BlockStmt) *ast.CallExpr {
	var found *ast.CallExpr
	ast.Inspect(body, func(n ast.Node) bool {
		if call, ok := n.(*ast.CallExpr); ok && found == nil {
			if sel, ok := call.Fun.(*ast.SelectorExpr); ok && sel.Sel.Name == "Hash" {
				if pkg, ok := sel.X.(*ast.Ident); ok && pkg.Name == "hashstructure" {
					found = call
				}
			}
		}
		return found == nil
	})
	return found
}

// addHashInput reads one value the hash covers: a field of the object
// (a root, walked for ignore tags), a method of it (the field of that name,
// resolved), a field read through a method (as a string), or something from
// outside the object.
func (p *goPackage) addHashInput(h *release.Hash, kind, recv string, arg ast.Expr) error {
	expr := p.source(arg)
	if chain, ok := selectorChain(arg, recv); ok {
		jsonPath, typ, err := p.resolve(kind, chain)
		if err != nil {
			return err
		}
		h.Roots = append(h.Roots, jsonPath)
		h.Ignored = append(h.Ignored, p.ignored(typ, jsonPath, map[string]bool{})...)
		return nil
	}
	call, ok := arg.(*ast.CallExpr)
	if !ok {
		return fmt.Errorf("cannot read the hash input %s", expr)
	}
	if chain, ok := selectorChain(call.Fun, recv); ok {
		method := chain[len(chain)-1]
		if len(chain) == 1 {
			// A method of the object computing a value, named for the
			// spec field it resolves (AMIFamily -> spec.amiFamily).
			jsonPath, _, err := p.resolve(kind, []string{"Spec", method})
			if err != nil {
				return fmt.Errorf("%s: no spec field named for the method: %w", expr, err)
			}
			h.Inputs = append(h.Inputs, release.HashInput{Expr: expr, Path: jsonPath, How: "resolved"})
			return nil
		}
		jsonPath, _, err := p.resolve(kind, chain[:len(chain)-1])
		if err != nil {
			return fmt.Errorf("%s: %w", expr, err)
		}
		h.Inputs = append(h.Inputs, release.HashInput{Expr: expr, Path: jsonPath, How: "as " + method + "()"})
		return nil
	}
	h.Inputs = append(h.Inputs, release.HashInput{Expr: expr})
	return nil
}

// selectorChain reads recv.A.B.C as [A B C].
func selectorChain(e ast.Expr, recv string) ([]string, bool) {
	var chain []string
	for {
		switch x := e.(type) {
		case *ast.SelectorExpr:
			chain = append([]string{x.Sel.Name}, chain...)
			e = x.X
		case *ast.Ident:
			return chain, x.Name == recv && len(chain) > 0
		default:
			return nil, false
		}
	}
}

// resolve follows Go field names from type typ to their JSON path and the
// type name of the last field ("" when it is not a struct of the package).
func (p *goPackage) resolve(typ string, goNames []string) (string, string, error) {
	var jsonPath []string
	for _, name := range goNames {
		st := p.structs[typ]
		if st == nil {
			return "", "", fmt.Errorf("%s is not a struct of the package", typ)
		}
		field, ok := findField(st, name)
		if !ok {
			return "", "", fmt.Errorf("%s has no field %s", typ, name)
		}
		switch jn := jsonName(field); jn {
		case "-":
			return "", "", fmt.Errorf("%s.%s is not a JSON field", typ, name)
		case "":
		default:
			jsonPath = append(jsonPath, jn)
		}
		typ = localType(field.Type)
	}
	return strings.Join(jsonPath, "."), typ, nil
}

func findField(st *ast.StructType, name string) (*ast.Field, bool) {
	for _, f := range st.Fields.List {
		if len(f.Names) == 0 {
			if fieldTypeName(f.Type) == name {
				return f, true
			}
			continue
		}
		for _, n := range f.Names {
			// The method AMIFamily names the field AMIFamily.
			if strings.EqualFold(n.Name, name) {
				return f, true
			}
		}
	}
	return nil, false
}

// ignored lists the JSON paths under prefix that are tagged hash:"ignore",
// following the package's own struct types.
func (p *goPackage) ignored(typ, prefix string, seen map[string]bool) []string {
	st := p.structs[typ]
	if st == nil || seen[typ] {
		return nil
	}
	seen[typ] = true
	defer delete(seen, typ)
	var out []string
	for _, f := range st.Fields.List {
		jn := jsonName(f)
		if jn == "-" {
			continue
		}
		fieldPath := prefix
		if jn != "" {
			fieldPath = prefix + "." + jn
		}
		if tag(f, "hash") == "ignore" {
			out = append(out, fieldPath)
			continue
		}
		out = append(out, p.ignored(localType(f.Type), fieldPath, seen)...)
	}
	return out
}

// jsonName is the field's JSON name; "" for an inline embedded field, "-"
// for a field JSON never writes: tagged so, or untagged in a type with its
// own marshalling (NillableDuration's Raw).
func jsonName(f *ast.Field) string {
	name, _, _ := strings.Cut(tag(f, "json"), ",")
	if name == "" && len(f.Names) > 0 {
		return "-"
	}
	return name
}

func tag(f *ast.Field, key string) string {
	if f.Tag == nil {
		return ""
	}
	raw, err := strconv.Unquote(f.Tag.Value)
	if err != nil {
		return ""
	}
	return reflect.StructTag(raw).Get(key)
}

// localType is the package-local type a field holds, through pointers and
// slices; "" for maps and other packages' types.
func localType(e ast.Expr) string {
	switch x := e.(type) {
	case *ast.StarExpr:
		return localType(x.X)
	case *ast.ArrayType:
		return localType(x.Elt)
	case *ast.Ident:
		return x.Name
	}
	return ""
}

func fieldTypeName(e ast.Expr) string {
	switch x := e.(type) {
	case *ast.StarExpr:
		return fieldTypeName(x.X)
	case *ast.Ident:
		return x.Name
	case *ast.SelectorExpr:
		return x.Sel.Name
	}
	return ""
}

func (p *goPackage) readHashOptions(h *release.Hash, e ast.Expr) {
	if u, ok := e.(*ast.UnaryExpr); ok {
		e = u.X
	}
	lit, ok := e.(*ast.CompositeLit)
	if !ok {
		return
	}
	for _, elt := range lit.Elts {
		kv, ok := elt.(*ast.KeyValueExpr)
		if !ok {
			continue
		}
		key, _ := kv.Key.(*ast.Ident)
		val, _ := kv.Value.(*ast.Ident)
		if key == nil || val == nil || val.Name != "true" {
			continue
		}
		switch key.Name {
		case "SlicesAsSets":
			h.SlicesAsSets = true
		case "IgnoreZeroValue":
			h.IgnoreZeroValue = true
		case "ZeroNil":
			h.ZeroNil = true
		}
	}
}

func (p *goPackage) source(e ast.Expr) string {
	var b strings.Builder
	if err := printExpr(&b, e); err != nil {
		return fmt.Sprintf("<expression at %s>", p.fset.Position(e.Pos()))
	}
	return b.String()
}
