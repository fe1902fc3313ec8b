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
	case name == "json.match_schema", name == "json.verify_schema":
		return "a schema's $ref can read local files and fetch URLs, and checking against a schema has no cost a policy could be held to; compare the fields you need in Rego", true
	case strings.HasPrefix(name, "graphql."):
		return "GraphQL documents have no place in a Karpenter policy, and their parsers no cost bound", true
	case name == "rego.parse_module":
		return "parsing Rego inside a policy has no cost bound", true
	case name == "regex.globs_match":
		return "intersecting two patterns can take time exponential in their length; use regex.match", true
	case name == "regex.template_match":
		return "karpgate cannot stop a template's regular expressions at the evaluation's deadline (OPA builds them out of its reach); use regex.match", true
	}
	return "", false
}

// refusedBuiltin is forbiddenBuiltin, and every builtin no cost class
// holds: a builtin karpgate has not judged is refused, not let through.
func refusedBuiltin(name string) (reason string, refused bool) {
	if reason, forbidden := forbiddenBuiltin(name); forbidden {
		return reason, true
	}
	if !classified(name) {
		return "karpgate has not judged what a call of it costs (a builtin of a newer OPA?)", true
	}
	return "", false
}

// capabilities are OPA's builtins for this version minus the forbidden
// ones, plus extra: the caller's own builtins (karpgate's), which the
// sandbox does not know and does not judge.
func capabilities(extra []*ast.Builtin) *ast.Capabilities {
	caps := ast.CapabilitiesForThisVersion()
	caps.Builtins = slices.DeleteFunc(caps.Builtins, func(b *ast.Builtin) bool {
		_, refused := refusedBuiltin(b.Name)
		return refused
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
				if reason, refused := refusedBuiltin(name); refused {
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
