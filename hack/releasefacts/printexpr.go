package main

import (
	"go/ast"
	"go/printer"
	"go/token"
	"io"
)

// printExpr writes an expression as gofmt would, on one line.
func printExpr(w io.Writer, e ast.Expr) error {
	return printer.Fprint(w, token.NewFileSet(), e)
}
