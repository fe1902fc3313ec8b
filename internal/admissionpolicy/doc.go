// Package admissionpolicy evaluates ValidatingAdmissionPolicies offline,
// with the API server's own code: k8s.io/apiserver's
// plugin/policy/validating compiles the CEL (variables, validations,
// messages, audit annotations, match conditions) in the API server's CEL
// environment, and its dispatcher matches the request, finds each
// binding's parameters and turns failed validations into a denial,
// warnings and audit annotations as the admission plugin does. What the
// API server reads from informers (the policies, bindings and parameter
// objects) comes from the caller instead.
//
// The one piece written here is what the plugin keeps unexported: compile
// mirrors validating.compilePolicy, from the same exported compilers.
// Objects must come at the version the policies match: the API server
// converts a request at another version through the CRD's conversion
// first (matchPolicy Equivalent), which callers do with package conversion.
//
// Check compiles a policy as the API server validates a new one: in the
// CEL environment of the oldest Kubernetes version it must load on, so
// that a function newer than that version is an error here rather than a
// refused install there.
package admissionpolicy
