// Package reportfile is the JSON file form shared by otelbench's run reports (load, pipeline,
// profile): written indented, read with the layout's schema checked, with one wording for the
// errors of both.
package reportfile

import (
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
)

// Write writes v as indented JSON.
func Write(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return fmt.Errorf("write report: %w", err)
	}
	return nil
}

// Read decodes a JSON report into v, then checks that schema(), the schema v now holds, is one
// of want: a report of another layout, or of no otelbench report at all, is refused by name.
func Read(rd io.Reader, v any, schema func() string, want ...string) error {
	if err := json.NewDecoder(rd).Decode(v); err != nil {
		return fmt.Errorf("read report: %w", err)
	}
	if got := schema(); !slices.Contains(want, got) {
		quoted := make([]string, len(want))
		for i, w := range want {
			quoted[i] = fmt.Sprintf("%q", w)
		}
		return fmt.Errorf("read report: schema %q, want %s", got, strings.Join(quoted, " or "))
	}
	return nil
}
