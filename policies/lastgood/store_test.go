package lastgood

import (
	"context"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/karpgate/karpgate/policies/policywatch"
)

func TestStoreKeepsTheFilesAndRefusesEditedOnes(t *testing.T) {
	c := fake.NewClientBuilder().Build()
	clock := time.Date(2024, 6, 5, 12, 0, 0, 0, time.UTC)
	s := Store{Client: c, Namespace: "karpgate", Name: "karpgate-last-good-policy", Writer: "karpgate-0", Now: func() time.Time { return clock }}
	ctx := context.Background()
	if _, _, err := s.Load(ctx); err == nil {
		t.Fatal("Load found files before any Save")
	}
	files := policywatch.Files{
		Config:   []byte("environment: production\n"),
		Policies: [][]policywatch.File{{{Path: "acme/weight.rego", Content: []byte("package acme")}}},
	}
	if err := s.Save(ctx, files); err != nil {
		t.Fatal(err)
	}
	got, saved, err := s.Load(ctx)
	if err != nil || got.Sum() != files.Sum() || !saved.Equal(clock) {
		t.Fatalf("Load = %+v, %v, %v; want the files saved at %v", got, saved, err, clock)
	}

	// The same files again write nothing.
	cm := &corev1.ConfigMap{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: "karpgate", Name: s.Name}, cm); err != nil {
		t.Fatal(err)
	}
	clock = clock.Add(time.Hour)
	if err := s.Save(ctx, files); err != nil {
		t.Fatal(err)
	}
	again := &corev1.ConfigMap{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: "karpgate", Name: s.Name}, again); err != nil || again.ResourceVersion != cm.ResourceVersion {
		t.Fatalf("saving the same files wrote the ConfigMap again (%s -> %s)", cm.ResourceVersion, again.ResourceVersion)
	}

	// A hand edit of the files is refused.
	again.Data[DataKey] = strings.Replace(again.Data[DataKey], "cGFja2FnZSBhY21l", "cGFja2FnZSBldmls", 1)
	if err := c.Update(ctx, again); err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.Load(ctx); err == nil || !strings.Contains(err.Error(), "edited by hand") {
		t.Fatalf("an edited ConfigMap: %v", err)
	}
}

func TestRestoreKeepsFilesInTheirFolder(t *testing.T) {
	files := policywatch.Files{Policies: [][]policywatch.File{{{Path: "../../etc/passwd", Content: []byte("x")}}}}
	if _, err := files.Restore(t.TempDir(), policywatch.Options{}); err == nil || !strings.Contains(err.Error(), "outside its folder") {
		t.Fatalf("got %v, want a path outside its folder refused", err)
	}
}
