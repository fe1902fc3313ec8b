package explain

import (
	"bytes"
	"testing"
	"time"
)

func TestWriteText(t *testing.T) {
	paris, err := time.LoadLocation("Europe/Paris")
	if err != nil {
		t.Skip("no tzdata:", err)
	}
	tests := []struct {
		golden string
		loc    *time.Location
	}{
		{"report.txt", time.UTC},
		{"report-paris.txt", paris},
	}
	for _, tt := range tests {
		t.Run(tt.golden, func(t *testing.T) {
			var out bytes.Buffer
			if err := WriteText(&out, fixtureReport(t, tt.loc)); err != nil {
				t.Fatal(err)
			}
			golden(t, tt.golden, out.Bytes())
		})
	}
}
