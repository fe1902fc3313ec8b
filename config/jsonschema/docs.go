package jsonschema

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strings"
)

// Docs are the doc comments of package config's types and their fields,
// which become the schema's descriptions (what an editor shows on hover).
type Docs struct {
	types  map[string]string
	fields map[string]string // "Type.Field"
}

func (d Docs) field(typeName, fieldName string) string {
	return d.fields[typeName+"."+fieldName]
}

// ReadDocs parses the Go files of package config in dir (tests excluded)
// for the doc comments of its struct types and their fields.
func ReadDocs(dir string) (Docs, error) {
	d := Docs{types: map[string]string{}, fields: map[string]string{}}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return d, err
	}
	fset := token.NewFileSet()
	for _, e := range entries {
		name := e.Name()
		if e.IsDir() || !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			continue
		}
		file, err := parser.ParseFile(fset, filepath.Join(dir, name), nil, parser.ParseComments)
		if err != nil {
			return d, err
		}
		for _, decl := range file.Decls {
			gen, ok := decl.(*ast.GenDecl)
			if !ok {
				continue
			}
			for _, spec := range gen.Specs {
				ts, ok := spec.(*ast.TypeSpec)
				if !ok {
					continue
				}
				st, ok := ts.Type.(*ast.StructType)
				if !ok {
					continue
				}
				doc := ts.Doc
				if doc == nil {
					doc = gen.Doc
				}
				d.types[ts.Name.Name] = clean(doc.Text())
				for _, f := range st.Fields.List {
					text := f.Doc.Text()
					if text == "" {
						text = f.Comment.Text()
					}
					for _, n := range f.Names {
						d.fields[ts.Name.Name+"."+n.Name] = clean(text)
					}
				}
			}
		}
	}
	return d, nil
}

// clean joins a comment's lines into one paragraph.
func clean(text string) string {
	return strings.Join(strings.Fields(text), " ")
}
