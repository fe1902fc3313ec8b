package admission_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"

	"github.com/go-logr/logr"
	admissionv1 "k8s.io/api/admission/v1"

	"github.com/karpgate/karpgate/policies"
	"github.com/karpgate/karpgate/webhook/admission"
)

// The validating webhook answers an AdmissionReview the way the API server
// relays it to kubectl: a denial with one line per finding.
func ExampleNewValidatingWebhook() {
	engine, err := policies.New(context.Background(), policies.Options{})
	if err != nil {
		panic(err)
	}
	hook := admission.NewValidatingWebhook(admission.Static(engine), logr.Discard())

	review := []byte(`{"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "request": {
		"uid": "705ab4f5-6393-11e8-b7cc-42010a800002", "operation": "CREATE",
		"kind": {"group": "karpenter.k8s.aws", "version": "v1", "kind": "EC2NodeClass"}, "name": "web",
		"object": {"apiVersion": "karpenter.k8s.aws/v1", "kind": "EC2NodeClass",
			"metadata": {"name": "web", "labels": {"karpgate.io/environment": "production"}},
			"spec": {"amiSelectorTerms": [{"alias": "bottlerocket@latest"}]}}}}`)
	req := httptest.NewRequest(http.MethodPost, "/validate", bytes.NewReader(review))
	req.Header.Set("Content-Type", "application/json")
	rec := httptest.NewRecorder()
	hook.ServeHTTP(rec, req)

	var answer admissionv1.AdmissionReview
	if err := json.Unmarshal(rec.Body.Bytes(), &answer); err != nil {
		panic(err)
	}
	fmt.Println("allowed:", answer.Response.Allowed)
	fmt.Println(answer.Response.Result.Message)
	// Output:
	// allowed: false
	// EC2NodeClass/web breaks 1 karpgate rule:
	// KG101 spec.amiSelectorTerms[0].alias: alias "bottlerocket@latest" follows every AMI release, so each release drifts and replaces every node of this production EC2NodeClass (fix: Pin a version you have tested, such as bottlerocket@v1.20.3)
}
