package sandbox

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/open-policy-agent/opa/v1/ast"
)

// forbiddenBuiltin reports whether a policy may not call the OPA builtin
// name, and why. Policies see only the object under review, the
// configuration and the data folders: a rule that could call out or read
// the host would make lint results depend on the machine and would let a
// policy exfiltrate what the webhook sees.
func forbiddenBuiltin(name string) (reason string, forbidden bool) {
	switch {
	case name == "http.send", strings.HasPrefix(name, "net."):
		return "policies may not reach the network", true
	case name == "opa.runtime":
		return "policies may not read the environment or OPA's runtime configuration", true
	case strings.HasPrefix(name, "providers."):
		return "policies may not sign requests for cloud providers", true
	case name == "strings.render_template":
		return "a template's output has no size a policy could be held to (Limits.MaxBuiltinBytes); use sprintf", true
	case name == "graph.reachable_paths":
		return "the paths through a graph can grow exponentially with it; use graph.reachable", true
	}
	return "", false
}

// capabilities are OPA's builtins for this version minus the forbidden
// ones, plus extra: the caller's own builtins (karpgate's), which the
// sandbox does not know and does not judge.
func capabilities(extra []*ast.Builtin) *ast.Capabilities {
	caps := ast.CapabilitiesForThisVersion()
	caps.Builtins = slices.DeleteFunc(caps.Builtins, func(b *ast.Builtin) bool {
		_, forbidden := forbiddenBuiltin(b.Name)
		return forbidden
	})
	caps.Builtins = append(caps.Builtins, extra...)
	caps.AllowNet = []string{} // belt and braces: no host is reachable even if http.send came back
	return caps
}

// Compile compiles modules as Rego v1 with capabilities(extra) and print
// statements enabled (for `karpgate verify`'s output); a call of a
// forbidden builtin fails with why it is forbidden.
func Compile(modules map[string]*ast.Module, extra []*ast.Builtin) (*ast.Compiler, error) {
	c := ast.NewCompiler().
		WithCapabilities(capabilities(extra)).
		WithDefaultRegoVersion(ast.RegoV1).
		WithEnablePrintStatements(true)
	if c.Compile(modules); c.Failed() {
		return nil, explainCompileErrors(c.Errors)
	}
	return c, nil
}

// explainCompileErrors turns OPA's "undefined function http.send" into an
// error that says the builtin is forbidden in karpgate and why.
func explainCompileErrors(errs ast.Errors) error {
	var lines []string
	for _, e := range errs {
		msg := e.Error()
		if e.Code == ast.TypeErr || e.Code == ast.CompileErr {
			if name, ok := strings.CutPrefix(e.Message, "undefined function "); ok {
				if reason, forbidden := forbiddenBuiltin(name); forbidden {
					msg = fmt.Sprintf("%s: %s is not available in karpgate policies: %s", locationOf(e), name, reason)
				}
			}
		}
		lines = append(lines, msg)
	}
	return errors.New(strings.Join(lines, "\n"))
}

func locationOf(e *ast.Error) string {
	if e.Location == nil {
		return "policy"
	}
	return fmt.Sprintf("%s:%d", e.Location.File, e.Location.Row)
}
