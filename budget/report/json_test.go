package report

import (
	"bytes"
	"encoding/json"
	"testing"
)

func TestWriteJSON(t *testing.T) {
	var out bytes.Buffer
	if err := WriteJSON(&out, fixtureReport(t, nil)); err != nil {
		t.Fatal(err)
	}
	golden(t, "report.json", out.Bytes())

	// The contract scripts rely on: unlimited is a flag, never a number.
	var doc struct {
		NodePools []struct {
			Name string
			At   []struct {
				Time    string
				Reasons map[string]map[string]any
			}
		}
	}
	if err := json.Unmarshal(out.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	hours := doc.NodePools[0]
	if hours.Name != "business-hours" || len(hours.At) != 2 {
		t.Fatalf("first pool = %+v", hours)
	}
	inside, evening := hours.At[0].Reasons["Drifted"], hours.At[1].Reasons["Drifted"]
	if inside["allowed"] != float64(0) || inside["unlimited"] != nil {
		t.Errorf("Drifted at 10:00 = %v, want allowed 0", inside)
	}
	if _, hasNumber := evening["allowed"]; hasNumber || evening["unlimited"] != true {
		t.Errorf("Drifted at 18:00 = %v, want unlimited: true and no number", evening)
	}
}
