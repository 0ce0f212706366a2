package otlpwire

import (
	"errors"
	"io"
	"testing"

	"google.golang.org/protobuf/encoding/protowire"
)

func TestConsumeVarint(t *testing.T) {
	for _, v := range []uint64{0, 1, 127, 128, 300, 1<<63 - 1, 1 << 63, ^uint64(0)} {
		b := protowire.AppendVarint(nil, v)
		got, pos, err := ConsumeVarint(b, 0)
		if err != nil || got != v || pos != len(b) {
			t.Errorf("%d: got %d at %d, %v", v, got, pos, err)
		}
	}
	// pdata keeps only the tenth byte's low bit and refuses an eleventh byte.
	ten := []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f}
	if got, _, err := ConsumeVarint(ten, 0); err != nil || got != ^uint64(0) {
		t.Errorf("ten bytes: got %x, %v", got, err)
	}
	eleven := []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01}
	if _, _, err := ConsumeVarint(eleven, 0); !errors.Is(err, ErrInvalid) {
		t.Errorf("eleven bytes: %v, want ErrInvalid", err)
	}
	if _, _, err := ConsumeVarint([]byte{0x80}, 0); !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Errorf("cut varint: %v, want EOF", err)
	}
}

func TestConsumeTag(t *testing.T) {
	b := protowire.AppendTag(nil, 1000, protowire.BytesType)
	num, wt, pos, err := ConsumeTag(b, 0)
	if err != nil || num != 1000 || wt != Len || pos != len(b) {
		t.Errorf("got %d %d %d %v", num, wt, pos, err)
	}
	if _, _, _, err := ConsumeTag([]byte{0x02}, 0); !errors.Is(err, ErrInvalid) { // field 0
		t.Errorf("field 0: %v, want ErrInvalid", err)
	}
}

func TestConsumeLen(t *testing.T) {
	b := protowire.AppendBytes(nil, []byte("abc"))
	v, end, err := ConsumeBytes(b, 0)
	if err != nil || string(v) != "abc" || end != len(b) {
		t.Errorf("got %q %d %v", v, end, err)
	}
	if _, _, err := ConsumeBytes(b[:len(b)-1], 0); !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Errorf("short value: %v, want EOF", err)
	}
	huge := protowire.AppendVarint(nil, 1<<63)
	if _, _, err := ConsumeLen(huge, 0); !errors.Is(err, ErrInvalid) {
		t.Errorf("negative length: %v, want ErrInvalid", err)
	}
}

// TestConsumeUnknown: scalars are skipped whole; a group ends at its end tag, or (pdata's quirk)
// at its first non-group field; a group at the very end of its message is cut.
func TestConsumeUnknown(t *testing.T) {
	tail := protowire.AppendVarint(protowire.AppendTag(nil, 2, protowire.VarintType), 1)
	for _, tc := range []struct {
		name string
		b    []byte // after the unknown field's tag
		wt   uint8
		end  int // the position after it; -1: an error
	}{
		{"varint", protowire.AppendVarint(nil, 300), Varint, 2},
		{"fixed64", protowire.AppendFixed64(nil, 1), I64, 8},
		{"fixed32", protowire.AppendFixed32(nil, 1), I32, 4},
		{"bytes", protowire.AppendBytes(nil, []byte("xy")), Len, 3},
		{"empty group", append(protowire.AppendTag(nil, 9, protowire.EndGroupType), tail...), SGroup, 1},
		{"group with a field", append(protowire.AppendFixed32(protowire.AppendTag(nil, 1, protowire.Fixed32Type), 1), tail...), SGroup, 5},
		{"group at the end", protowire.AppendTag(nil, 9, protowire.EndGroupType), SGroup, -1},
		{"end group", tail, EGroup, -1},
		{"wire type 6", tail, 6, -1},
	} {
		end, err := ConsumeUnknown(tc.b, 0, tc.wt)
		if tc.end < 0 {
			if err == nil {
				t.Errorf("%s: ended at %d, want an error", tc.name, end)
			}
			continue
		}
		if err != nil || end != tc.end {
			t.Errorf("%s: ended at %d, %v; want %d", tc.name, end, err, tc.end)
		}
	}
}

func TestConsumeFixed(t *testing.T) {
	b := protowire.AppendFixed64(protowire.AppendFixed32(nil, 7), 1<<40)
	u32, pos, err := ConsumeFixed32(b, 0)
	if err != nil || u32 != 7 || pos != 4 {
		t.Errorf("fixed32: %d %d %v", u32, pos, err)
	}
	u64, pos, err := ConsumeFixed64(b, pos)
	if err != nil || u64 != 1<<40 || pos != 12 {
		t.Errorf("fixed64: %d %d %v", u64, pos, err)
	}
	if _, _, err := ConsumeFixed64(b, 8); !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Errorf("short fixed64: %v", err)
	}
}

func TestZigzag32(t *testing.T) {
	for _, v := range []int32{0, -1, 1, -9, 1 << 30, -1 << 31} {
		if got := Zigzag32(protowire.EncodeZigZag(int64(v))); got != v {
			t.Errorf("%d: got %d", v, got)
		}
	}
}
