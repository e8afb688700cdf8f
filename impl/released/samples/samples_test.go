package samples

import (
	"bytes"
	"testing"
)

// TestVarints: schema 17's encoding of sourceEventSeqs, written from its
// description (unsigned LEB128; the first seq, then zig-zag deltas: 2d for
// d >= 0, 2|d|-1 below), at the edges of both: a delta of 0, -1 and 1, a
// seq of 127, 128 and 300 (one and two bytes).
func TestVarints(t *testing.T) {
	for _, c := range []struct {
		seqs []int64
		want []byte
	}{
		{nil, nil},
		{[]int64{0}, []byte{0}},
		{[]int64{127}, []byte{0x7f}},
		{[]int64{128}, []byte{0x80, 0x01}},
		{[]int64{300}, []byte{0xac, 0x02}},
		{[]int64{1, 2}, []byte{1, 2}},
		{[]int64{3, 3}, []byte{3, 0}},
		{[]int64{5, 4}, []byte{5, 1}},
		{[]int64{5, 3}, []byte{5, 3}},
		{[]int64{200, 0}, []byte{0xc8, 0x01, 0x8f, 0x03}},
	} {
		if got := Varints(c.seqs...); !bytes.Equal(got, c.want) {
			t.Errorf("Varints(%v) = % x, want % x", c.seqs, got, c.want)
		}
	}
}

// TestJSONAsTheSeedWrites: strings as JSON.stringify writes them.
func TestJSONAsTheSeedWrites(t *testing.T) {
	for in, want := range map[string]string{"<read>": `"<read>"`, "a&b": `"a&b"`, "q\"\n": `"q\"\n"`, "": `""`} {
		if got := string(jsonJS(in)); got != want {
			t.Errorf("jsonJS(%q) = %s, want %s", in, got, want)
		}
	}
}
