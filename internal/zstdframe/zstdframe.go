package zstdframe

import (
	"bytes"
	"encoding/binary"
	"math/bits"
)

// Shape is how a frame's header is laid out.
type Shape struct {
	// Single is the Single_Segment_flag: no window descriptor, and the
	// window is the content size (which must then be present).
	Single bool
	// FCSFlag is the Frame_Content_Size_flag, 0 to 3: the content size
	// takes 0 bytes (1 when Single), 2 (stored minus 256), 4 or 8.
	FCSFlag int
	// DictSize is the size of the Dictionary_ID field: 0, 1, 2 or 4
	// bytes; the ID written is 0 (no dictionary).
	DictSize int
	// Checksum sets the Content_Checksum_flag: the low 32 bits of the
	// content's XXH64 follow the last block.
	Checksum bool
	// Unused sets descriptor bit 4, which a decoder must not interpret.
	Unused bool
	// Window is the window descriptor's exponent when not Single: the
	// window is 1 KiB << Window.
	Window int
}

// Fits reports whether a frame of this shape can hold n bytes of content:
// a content size field must be able to say n.
func (s Shape) Fits(n int) bool {
	switch s.FCSFlag {
	case 0:
		return !s.Single || n < 256
	case 1:
		return n >= 256 && n < 256+65536
	case 2:
		return uint64(n) <= 0xffffffff
	}
	return true
}

// MaxBlock is Block_Maximum_Size for n bytes of content in this shape:
// the window size, at most 128 KiB.
func (s Shape) MaxBlock(n int) int {
	if s.Single {
		return max(1, min(n, 128<<10))
	}
	return min(1024<<s.Window, 128<<10)
}

// Block is one block of a frame: raw (its bytes) or RLE (one byte,
// repeated Size times).
type Block struct {
	RLE  bool
	Data []byte // raw: the bytes; RLE: the one byte
	Size int    // the regenerated size
}

// Raw is a raw block of b.
func Raw(b []byte) Block { return Block{Data: b, Size: len(b)} }

// RLE is an RLE block of c repeated n times.
func RLE(c byte, n int) Block { return Block{RLE: true, Data: []byte{c}, Size: n} }

// Content is what blocks regenerate.
func Content(blocks []Block) []byte {
	var out []byte
	for _, b := range blocks {
		if b.RLE {
			out = append(out, bytes.Repeat(b.Data, b.Size)...)
		} else {
			out = append(out, b.Data...)
		}
	}
	return out
}

// Frame writes one frame of shape s holding blocks, the last of them
// marked last. The caller keeps to the format's limits (Fits, MaxBlock):
// Frame writes what it is given.
func Frame(s Shape, blocks []Block) []byte {
	content := Content(blocks)
	out := []byte{0x28, 0xb5, 0x2f, 0xfd}
	fhd := byte(s.FCSFlag) << 6
	if s.Single {
		fhd |= 0x20
	}
	if s.Unused {
		fhd |= 0x10
	}
	if s.Checksum {
		fhd |= 0x04
	}
	fhd |= map[int]byte{0: 0, 1: 1, 2: 2, 4: 3}[s.DictSize]
	out = append(out, fhd)
	if !s.Single {
		out = append(out, byte(s.Window<<3))
	}
	out = append(out, make([]byte, s.DictSize)...)
	n := uint64(len(content))
	switch {
	case s.FCSFlag == 0 && s.Single:
		out = append(out, byte(n))
	case s.FCSFlag == 1:
		out = binary.LittleEndian.AppendUint16(out, uint16(n-256))
	case s.FCSFlag == 2:
		out = binary.LittleEndian.AppendUint32(out, uint32(n))
	case s.FCSFlag == 3:
		out = binary.LittleEndian.AppendUint64(out, n)
	}
	if len(blocks) == 0 {
		blocks = []Block{Raw(nil)}
	}
	for i, b := range blocks {
		h := uint32(b.Size) << 3
		if b.RLE {
			h |= 1 << 1
		}
		if i == len(blocks)-1 {
			h |= 1
		}
		out = append(out, byte(h), byte(h>>8), byte(h>>16))
		out = append(out, b.Data...)
	}
	if s.Checksum {
		out = binary.LittleEndian.AppendUint32(out, uint32(XXH64(content)))
	}
	return out
}

// Split cuts content into blocks of at most max bytes: each run of one
// byte at least minRun long becomes an RLE block, the rest raw blocks.
func Split(content []byte, max, minRun int) []Block {
	var blocks []Block
	raw := 0 // start of the pending raw bytes
	flush := func(end int) {
		for raw < end {
			n := min(max, end-raw)
			blocks = append(blocks, Raw(content[raw:raw+n]))
			raw += n
		}
	}
	for p := 0; p < len(content); {
		run := 1
		for p+run < len(content) && content[p+run] == content[p] && run < max {
			run++
		}
		if run >= minRun {
			flush(p)
			blocks = append(blocks, RLE(content[p], run))
			p += run
			raw = p
			continue
		}
		p += run
	}
	flush(len(content))
	return blocks
}

// XXH64 is the 64-bit xxHash of b with seed 0, from the xxHash
// specification (zstd's content checksum is its low 32 bits).
func XXH64(b []byte) uint64 {
	var (
		p1 uint64 = 11400714785074694791
		p2 uint64 = 14029467366897019727
		p3 uint64 = 1609587929392839161
		p4 uint64 = 9650029242287828579
		p5 uint64 = 2870177450012600261
	)
	round := func(acc, in uint64) uint64 { return bits.RotateLeft64(acc+in*p2, 31) * p1 }
	merge := func(acc, v uint64) uint64 { return (acc^round(0, v))*p1 + p4 }
	n := uint64(len(b))
	var h uint64
	if len(b) >= 32 {
		v1, v2, v3, v4 := p1+p2, p2, uint64(0), -p1
		for len(b) >= 32 {
			v1 = round(v1, binary.LittleEndian.Uint64(b))
			v2 = round(v2, binary.LittleEndian.Uint64(b[8:]))
			v3 = round(v3, binary.LittleEndian.Uint64(b[16:]))
			v4 = round(v4, binary.LittleEndian.Uint64(b[24:]))
			b = b[32:]
		}
		h = bits.RotateLeft64(v1, 1) + bits.RotateLeft64(v2, 7) + bits.RotateLeft64(v3, 12) + bits.RotateLeft64(v4, 18)
		h = merge(merge(merge(merge(h, v1), v2), v3), v4)
	} else {
		h = p5
	}
	h += n
	for ; len(b) >= 8; b = b[8:] {
		h ^= round(0, binary.LittleEndian.Uint64(b))
		h = bits.RotateLeft64(h, 27)*p1 + p4
	}
	if len(b) >= 4 {
		h ^= uint64(binary.LittleEndian.Uint32(b)) * p1
		h = bits.RotateLeft64(h, 23)*p2 + p3
		b = b[4:]
	}
	for _, c := range b {
		h ^= uint64(c) * p5
		h = bits.RotateLeft64(h, 11) * p1
	}
	h ^= h >> 33
	h *= p2
	h ^= h >> 29
	h *= p3
	h ^= h >> 32
	return h
}
