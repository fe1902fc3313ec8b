package storage

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func TestChangedFields(t *testing.T) {
	sent := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "karpenter.k8s.aws/v1", "kind": "EC2NodeClass",
		"metadata": map[string]any{"name": "a", "resourceVersion": "1", "generation": int64(1), "managedFields": []any{}},
		"spec":     map[string]any{"role": "r", "amiSelectorTerms": []any{map[string]any{"alias": "al2023@latest"}}},
	}}
	same := sent.DeepCopy()
	same.SetResourceVersion("2")
	same.SetManagedFields(nil)
	if got := changedFields(sent, same); len(got) != 0 {
		t.Errorf("a new resourceVersion and managedFields count as changes: %v", got)
	}
	mutated := same.DeepCopy()
	mutated.SetGeneration(2)
	_ = unstructured.SetNestedSlice(mutated.Object, []any{map[string]any{"alias": "al2023@v20240807"}}, "spec", "amiSelectorTerms")
	mutated.SetLabels(map[string]string{"x": "y"})
	if got := strings.Join(changedFields(sent, mutated), " "); got != "metadata.labels spec.amiSelectorTerms" {
		t.Errorf("changed fields = %q", got)
	}
}

func TestState(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "progress.json")
	s, resumed, err := loadState(path, "https://a")
	if err != nil || resumed {
		t.Fatalf("a missing file: %v, resumed %v", err, resumed)
	}
	ks := &kindState{CRDUID: "u1", After: "m"}
	ks.setFailed(map[string]bool{"z": true, "b": true})
	s.Kinds["nodepools.karpenter.sh"] = ks
	if err := s.save(path); err != nil {
		t.Fatal(err)
	}
	back, resumed, err := loadState(path, "https://a")
	if err != nil || !resumed {
		t.Fatalf("reading back: %v, resumed %v", err, resumed)
	}
	got := back.Kinds["nodepools.karpenter.sh"]
	if got.After != "m" || strings.Join(got.Failed, ",") != "b,z" || got.CRDUID != "u1" {
		t.Errorf("read back %+v", got)
	}
	if _, _, err := loadState(path, "https://b"); err == nil || !strings.Contains(err.Error(), "belongs to the cluster at https://a, not https://b") {
		t.Errorf("another cluster's progress: %v", err)
	}
	if err := os.WriteFile(path, []byte("{"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, _, err := loadState(path, "https://a"); err == nil || !strings.Contains(err.Error(), "remove it to start over") {
		t.Errorf("a broken file: %v", err)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Errorf("saving left temporary files: %v", entries)
	}
}
