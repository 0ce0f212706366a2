package stage

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
	"go.opentelemetry.io/collector/pdata/pcommon"
)

// TestAttributesJSON checks the JSON encoder against encoding/json for the value types.
func TestAttributesJSON(t *testing.T) {
	m := pcommon.NewMap()
	m.PutStr("s", "tab\t\"q\" \x01 é \xff")
	m.PutInt("i", -42)
	m.PutDouble("d", 1.5e300)
	m.PutBool("b", true)
	m.PutEmptyBytes("by").FromRaw([]byte{0, 1, 2})
	sl := m.PutEmptySlice("sl")
	sl.AppendEmpty().SetInt(1)
	sl.AppendEmpty().SetStr("x")
	m.PutEmptyMap("m").PutStr("k", "v")
	m.PutEmpty("nil")
	got := appendJSONMap(nil, m)
	var decoded map[string]any
	if err := json.Unmarshal(got, &decoded); err != nil {
		t.Fatalf("invalid JSON %s: %v", got, err)
	}
	want := map[string]any{
		"s": "tab\t\"q\" \x01 é \ufffd", "i": -42.0, "d": 1.5e300, "b": true, "by": "AAEC",
		"sl": []any{1.0, "x"}, "m": map[string]any{"k": "v"}, "nil": nil,
	}
	if diff := cmp.Diff(want, decoded); diff != "" {
		t.Errorf("decoded JSON (-want +got):\n%s", diff)
	}
}
