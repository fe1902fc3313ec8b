package policies

import (
	"fmt"
	"time"

	"github.com/open-policy-agent/opa/v1/ast"

	"github.com/karpgate/karpgate/config"
	"github.com/karpgate/karpgate/policies/waiver"
)

// evalInput is a request's input document two ways: as the Go values the
// request holds, which memo keys are made from, and as Rego's input,
// converted only when a rule is evaluated. An evaluation whose every rule
// is memoized and remembered never converts the object.
type evalInput struct {
	e     *Engine
	req   Request
	point config.EnforcementPoint
	// goInput has the fields of the Rego input the memoized rules may read
	// (see footprint.memoizable), under the same names.
	goInput map[string]any
	// waivers are the object's waivers as of the evaluation's instant.
	waivers []waiver.Waiver

	env       environment
	converted bool
	input     ast.Object
	object    ast.Value
	err       error
}

func (e *Engine) newEvalInput(req Request, point config.EnforcementPoint, now time.Time) *evalInput {
	env := e.environmentOf(req)
	in := &evalInput{e: e, req: req, point: point, env: env, waivers: readWaivers(req.Object, now)}
	in.goInput = map[string]any{
		"object":           req.Object,
		"operation":        string(req.Operation),
		"enforcementPoint": string(point),
		"production":       env.production,
		"objectProduction": env.object,
		"waivers":          waiversInput(in.waivers, changedWaivers(req)),
	}
	if req.OldObject != nil {
		in.goInput["oldObject"] = req.OldObject
		in.goInput["oldObjectProduction"] = env.oldObject
	}
	if req.UserInfo != nil {
		in.goInput["userInfo"] = userInfoInput(req.UserInfo)
	}
	return in
}

func userInfoInput(u *UserInfo) map[string]any {
	groups := make([]any, len(u.Groups))
	for i, g := range u.Groups {
		groups[i] = g
	}
	return map[string]any{"username": u.Username, "groups": groups}
}

// environment is whether a request is production, and why.
type environment struct {
	// object and oldObject are each object's own verdict (its labels and
	// tags, or the cluster-wide environment).
	object, oldObject bool
	// production is what rules judge by: on an UPDATE, the object is
	// production if the old or the new one is. Otherwise one patch that
	// removes the label would also switch off every production rule for
	// itself; KG604 reports the removal.
	production bool
}

func (e *Engine) environmentOf(req Request) environment {
	env := environment{object: e.cfg.IsProduction(req.Object)}
	if req.OldObject != nil {
		env.oldObject = e.cfg.IsProduction(req.OldObject)
	}
	env.production = env.object || env.oldObject
	return env
}

// rego is the input converted to Rego's representation, and the object in
// it, converted on the first call.
func (in *evalInput) rego() (ast.Object, ast.Value, error) {
	if !in.converted {
		in.converted = true
		in.input, in.object, in.err = in.e.inputOf(in.req, in.point, in.env)
		if in.err == nil {
			in.err = insertGo(in.input, in.goInput, "waivers", "userInfo")
		}
	}
	return in.input, in.object, in.err
}

// insertGo adds the named Go values of goInput, where present, to the Rego
// input.
func insertGo(in ast.Object, goInput map[string]any, keys ...string) error {
	for _, k := range keys {
		v, ok := goInput[k]
		if !ok {
			continue
		}
		value, err := ast.InterfaceToValue(v)
		if err != nil {
			return fmt.Errorf("input.%s: %w", k, err)
		}
		in.Insert(ast.StringTerm(k), ast.NewTerm(value))
	}
	return nil
}

// input is the input document of a request, and the object in it.
func (e *Engine) input(req Request, point config.EnforcementPoint) (in ast.Object, object ast.Value, err error) {
	return e.inputOf(req, point, e.environmentOf(req))
}

func (e *Engine) inputOf(req Request, point config.EnforcementPoint, env environment) (in ast.Object, object ast.Value, err error) {
	object, err = ast.InterfaceToValue(req.Object)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", objectRef(req.Object), err)
	}
	in = ast.NewObject(
		ast.Item(ast.StringTerm("object"), ast.NewTerm(object)),
		ast.Item(ast.StringTerm("operation"), ast.StringTerm(string(req.Operation))),
		ast.Item(ast.StringTerm("enforcementPoint"), ast.StringTerm(string(point))),
		ast.Item(ast.StringTerm("production"), ast.BooleanTerm(env.production)),
		ast.Item(ast.StringTerm("objectProduction"), ast.BooleanTerm(env.object)),
	)
	if req.OldObject != nil {
		old, err := ast.InterfaceToValue(req.OldObject)
		if err != nil {
			return nil, nil, fmt.Errorf("%s: old object: %w", objectRef(req.Object), err)
		}
		in.Insert(ast.StringTerm("oldObject"), ast.NewTerm(old))
		in.Insert(ast.StringTerm("oldObjectProduction"), ast.BooleanTerm(env.oldObject))
	}
	if req.Inventory != nil {
		in.Insert(ast.StringTerm("inventory"), ast.NewTerm(req.Inventory.value))
	}
	return in, object, nil
}
