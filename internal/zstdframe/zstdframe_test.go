package zstdframe

import (
	"bytes"
	"testing"

	"github.com/klauspost/compress/zstd"
)

func TestXXH64KnownValues(t *testing.T) {
	// The reference values of one input of each length class (under 4,
	// 4 to 7, 32 and more), as published with the xxHash port
	// github.com/cespare/xxhash.
	for in, want := range map[string]uint64{
		"":     0xef46db3751d8e999,
		"a":    0xd24ec4f1a98c6e5b,
		"as":   0x1c330fb2d66be179,
		"asd":  0x631c37ce72a97393,
		"asdf": 0x415872f599cea71e,
		"Call me Ishmael. Some years ago--never mind how long precisely-": 0x02a2e85470d6fd96,
	} {
		if got := XXH64([]byte(in)); got != want {
			t.Errorf("XXH64(%q) = %#x, want %#x", in, got, want)
		}
	}
}

// TestFramesDecode: every shape, over contents of every size class (empty,
// under 256, the 2-byte size's range, beyond it), decodes with the Go
// decoder (which checks the checksum) to the content, and Split's blocks
// regenerate their content.
func TestFramesDecode(t *testing.T) {
	dec, err := zstd.NewReader(nil, zstd.WithDecoderConcurrency(1))
	if err != nil {
		t.Fatal(err)
	}
	defer dec.Close()
	contents := [][]byte{nil, []byte("x"), bytes.Repeat([]byte("ab"), 127), append(bytes.Repeat([]byte(" "), 300), "tail"...), bytes.Repeat([]byte("0123456789abcdef"), 5000)}
	shapes := 0
	for _, c := range contents {
		for _, single := range []bool{false, true} {
			for fcs := range 4 {
				for _, dict := range []int{0, 1, 2, 4} {
					for _, sum := range []bool{false, true} {
						s := Shape{Single: single, FCSFlag: fcs, DictSize: dict, Checksum: sum, Unused: dict == 2, Window: fcs * 2}
						if !s.Fits(len(c)) {
							continue
						}
						shapes++
						blocks := Split(c, s.MaxBlock(len(c)), 4)
						if !bytes.Equal(Content(blocks), c) {
							t.Fatalf("Split(%d bytes) regenerates %d bytes", len(c), len(Content(blocks)))
						}
						got, err := dec.DecodeAll(Frame(s, blocks), nil)
						if err != nil || !bytes.Equal(got, c) {
							t.Fatalf("%+v over %d bytes: %d bytes back, %v", s, len(c), len(got), err)
						}
					}
				}
			}
		}
	}
	if shapes < 150 {
		t.Fatalf("only %d shapes tried", shapes)
	}
	// A wrong checksum is caught by the decoder: the checksum is real.
	f := Frame(Shape{Single: true, Checksum: true}, []Block{Raw([]byte("abc"))})
	f[len(f)-1] ^= 1
	if _, err := dec.DecodeAll(f, nil); err == nil {
		t.Fatal("a damaged checksum decoded")
	}
}
