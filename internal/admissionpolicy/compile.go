package admissionpolicy

import (
	"errors"
	"fmt"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	"k8s.io/apimachinery/pkg/util/version"
	plugincel "k8s.io/apiserver/pkg/admission/plugin/cel"
	"k8s.io/apiserver/pkg/admission/plugin/policy/validating"
	"k8s.io/apiserver/pkg/admission/plugin/webhook/matchconditions"
	"k8s.io/apiserver/pkg/cel/environment"
)

// compile is validating.compilePolicy, which the plugin does not export:
// the same compilers, environment, variables and evaluators.
func compile(p *admissionregistrationv1.ValidatingAdmissionPolicy) validating.Validator {
	hasParam := p.Spec.ParamKind != nil
	vars := plugincel.OptionalVariableDeclarations{HasParams: hasParam, HasAuthorizer: true}
	messageVars := plugincel.OptionalVariableDeclarations{HasParams: hasParam, HasAuthorizer: false}
	compiler, err := plugincel.NewCompositedCompiler(environment.MustBaseEnvSet(environment.DefaultCompatibilityVersion()))
	if err != nil {
		return validating.NewValidator(nil, nil, nil, nil, p.Spec.FailurePolicy, err)
	}
	compiler.CompileAndStoreVariables(variables(p), vars, environment.StoredExpressions)
	var matcher matchconditions.Matcher
	if len(p.Spec.MatchConditions) > 0 {
		conds := make([]plugincel.ExpressionAccessor, len(p.Spec.MatchConditions))
		for i := range p.Spec.MatchConditions {
			conds[i] = (*matchconditions.MatchCondition)(&p.Spec.MatchConditions[i])
		}
		matcher = matchconditions.NewMatcher(compiler.CompileCondition(conds, vars, environment.StoredExpressions), p.Spec.FailurePolicy, "policy", "validate", p.Name)
	}
	return validating.NewValidator(
		compiler.CompileCondition(validations(p), vars, environment.StoredExpressions),
		matcher,
		compiler.CompileCondition(auditAnnotations(p), vars, environment.StoredExpressions),
		compiler.CompileCondition(messageExpressions(p), messageVars, environment.StoredExpressions),
		p.Spec.FailurePolicy,
		nil,
	)
}

func variables(p *admissionregistrationv1.ValidatingAdmissionPolicy) []plugincel.NamedExpressionAccessor {
	out := make([]plugincel.NamedExpressionAccessor, len(p.Spec.Variables))
	for i, v := range p.Spec.Variables {
		out[i] = &validating.Variable{Name: v.Name, Expression: v.Expression}
	}
	return out
}

func validations(p *admissionregistrationv1.ValidatingAdmissionPolicy) []plugincel.ExpressionAccessor {
	out := make([]plugincel.ExpressionAccessor, len(p.Spec.Validations))
	for i, v := range p.Spec.Validations {
		out[i] = &validating.ValidationCondition{Expression: v.Expression, Message: v.Message, Reason: v.Reason}
	}
	return out
}

// messageExpressions keeps the plugin's indexing: one entry per
// validation, nil where it has no messageExpression.
func messageExpressions(p *admissionregistrationv1.ValidatingAdmissionPolicy) []plugincel.ExpressionAccessor {
	out := make([]plugincel.ExpressionAccessor, len(p.Spec.Validations))
	for i, v := range p.Spec.Validations {
		if v.MessageExpression != "" {
			out[i] = &validating.MessageExpressionCondition{MessageExpression: v.MessageExpression}
		}
	}
	return out
}

func auditAnnotations(p *admissionregistrationv1.ValidatingAdmissionPolicy) []plugincel.ExpressionAccessor {
	out := make([]plugincel.ExpressionAccessor, len(p.Spec.AuditAnnotations))
	for i, a := range p.Spec.AuditAnnotations {
		out[i] = &validating.AuditAnnotationCondition{Key: a.Key, ValueExpression: a.ValueExpression}
	}
	return out
}

// OldestKubernetes is the oldest Kubernetes whose API server karpgate's
// policies must load on: ValidatingAdmissionPolicy is GA
// (admissionregistration.k8s.io/v1) from 1.30.
var OldestKubernetes = version.MajorMinor(1, 30)

// Check compiles every expression of p as an API server of version minor
// does when the policy is created: new expressions get the CEL
// environment of the version before it (the API server's compatibility
// version), so a library function added later is an error.
func Check(p *admissionregistrationv1.ValidatingAdmissionPolicy, minor *version.Version) error {
	compat := version.MajorMinor(minor.Major(), minor.Minor()-1)
	compiler, err := plugincel.NewCompositedCompiler(environment.MustBaseEnvSet(compat))
	if err != nil {
		return err
	}
	hasParam := p.Spec.ParamKind != nil
	vars := plugincel.OptionalVariableDeclarations{HasParams: hasParam, HasAuthorizer: true}
	messageVars := plugincel.OptionalVariableDeclarations{HasParams: hasParam, HasAuthorizer: false}
	var errs []error
	for i, v := range p.Spec.Variables {
		// Stored, so that later expressions see the variable's type;
		// compiled once, as its expressions are the policy's largest.
		if r := compiler.CompileAndStoreVariable(&validating.Variable{Name: v.Name, Expression: v.Expression}, vars, environment.NewExpressions); r.Error != nil {
			errs = append(errs, fmt.Errorf("spec.variables[%d] (%s): %w", i, v.Name, r.Error))
		}
	}
	check := func(field string, e plugincel.ExpressionAccessor, decls plugincel.OptionalVariableDeclarations) {
		if r := compiler.CompileCELExpression(e, decls, environment.NewExpressions); r.Error != nil {
			errs = append(errs, fmt.Errorf("%s: %w", field, r.Error))
		}
	}
	for i, v := range p.Spec.Validations {
		check(fmt.Sprintf("spec.validations[%d].expression", i), &validating.ValidationCondition{Expression: v.Expression}, vars)
		if v.MessageExpression != "" {
			check(fmt.Sprintf("spec.validations[%d].messageExpression", i), &validating.MessageExpressionCondition{MessageExpression: v.MessageExpression}, messageVars)
		}
	}
	for i, a := range p.Spec.AuditAnnotations {
		check(fmt.Sprintf("spec.auditAnnotations[%d].valueExpression", i), &validating.AuditAnnotationCondition{Key: a.Key, ValueExpression: a.ValueExpression}, vars)
	}
	for i := range p.Spec.MatchConditions {
		check(fmt.Sprintf("spec.matchConditions[%d].expression", i), (*matchconditions.MatchCondition)(&p.Spec.MatchConditions[i]), vars)
	}
	return errors.Join(errs...)
}
