package released

import (
	"bytes"
	"errors"

	"github.com/klauspost/compress/zstd"
	"github.com/surfacelog/surface/impl/event"
)

// zstdMagic begins every zstd frame (0xFD2FB528, little-endian).
var zstdMagic = []byte{0x28, 0xb5, 0x2f, 0xfd}

// IsZstd reports whether data begins with a zstd frame.
func IsZstd(data []byte) bool { return len(data) >= 4 && string(data[:4]) == string(zstdMagic) }

// frameHeader is the layout of a frame header, read from its descriptor
// (RFC 8878 §3.1.1.1): where the dictionary ID starts and how long it is,
// and the header's whole size (the content size, 0 to 8 bytes, ends it).
type frameHeader struct{ dictAt, dictLen, size int }

func headerOf(fhd byte) frameHeader {
	single := fhd&0x20 != 0
	h := frameHeader{dictAt: 5, dictLen: []int{0, 1, 2, 4}[fhd&0x03]}
	if !single {
		h.dictAt++ // window descriptor
	}
	fcs := []int{0, 2, 4, 8}[fhd>>6]
	if fcs == 0 && single {
		fcs = 1
	}
	h.size = h.dictAt + h.dictLen + fcs
	return h
}

// frameEnd returns the length of the zstd frame at the start of data, read
// from its structure (frame header, block headers, checksum) without
// decompressing it, or ok == false when the frame is cut short (a torn
// frame). A structure no frame has is an error.
func frameEnd(data []byte) (n int, ok bool, err error) {
	if len(data) < 4 {
		return 0, false, nil // not even the magic yet
	}
	if !IsZstd(data) {
		return 0, false, errors.New("no zstd frame magic")
	}
	if len(data) < 5 {
		return 0, false, nil
	}
	if data[4]&0x08 != 0 {
		return 0, false, errors.New("reserved bit set in the frame header")
	}
	pos := headerOf(data[4]).size
	for {
		if pos+3 > len(data) {
			return 0, false, nil
		}
		h := uint32(data[pos]) | uint32(data[pos+1])<<8 | uint32(data[pos+2])<<16
		pos += 3
		last, typ, size := h&1 == 1, (h>>1)&3, int(h>>3)
		switch typ {
		case 1: // RLE: one byte stands for size bytes
			size = 1
		case 3:
			return 0, false, errors.New("reserved block type")
		}
		pos += size
		if pos > len(data) {
			return 0, false, nil
		}
		if last {
			break
		}
	}
	if data[4]&0x04 != 0 { // content checksum
		pos += 4
		if pos > len(data) {
			return 0, false, nil
		}
	}
	return pos, true, nil
}

// frames splits data into its zstd frames and decompresses each (its
// checksum checked by the decoder). A torn last frame is not an error: its
// bytes are returned as torn, with the plaintext of the records it holds
// whole when they can be recovered (recovered is nil otherwise).
func frames(data []byte) (plain [][]byte, torn []byte, err error) {
	dec, err := zstd.NewReader(nil, zstd.WithDecoderConcurrency(1))
	if err != nil {
		return nil, nil, err
	}
	defer dec.Close()
	for off := 0; off < len(data); {
		n, ok, ferr := frameEnd(data[off:])
		if ferr != nil {
			return nil, nil, event.Errorf(event.CodePersistCorrupt, -1, "zstd frame %d at byte %d: %v", len(plain)+1, off, ferr)
		}
		if !ok {
			return plain, data[off:], nil
		}
		out, derr := dec.DecodeAll(data[off:off+n], nil)
		if derr != nil {
			return nil, nil, event.Errorf(event.CodePersistCorrupt, -1, "zstd frame %d at byte %d: %v", len(plain)+1, off, derr)
		}
		plain = append(plain, out)
		off += n
	}
	return plain, nil, nil
}

// recoverTorn returns the complete JSONL records (up to the last newline)
// of what a torn frame holds whole, or nil: the content of every block
// that arrived whole, then the bytes that arrived of a raw block cut short
// (a raw block's bytes are its content). A streaming decoder gives the
// same; the Go decoder's streaming reader keeps a frame's last block until
// the checksum that follows it arrives, so a frame torn in its checksum
// would give nothing (REL-1: the records a torn frame holds are kept).
func recoverTorn(torn []byte) []byte {
	out := tornContent(torn)
	if i := bytes.LastIndexByte(out, '\n'); i >= 0 {
		return out[:i+1]
	}
	return nil
}

// tornContent decodes the whole blocks of a torn frame as a frame of their
// own (windowed, no content size, no checksum, the last whole block marked
// last) and appends the part of a raw block cut short.
func tornContent(torn []byte) []byte {
	if len(torn) < 5 || !IsZstd(torn) || torn[4]&0x08 != 0 {
		return nil
	}
	fhd := torn[4]
	h := headerOf(fhd)
	if h.size > len(torn) {
		return nil
	}
	single := fhd&0x20 != 0
	var window byte
	if !single {
		window = torn[5]
	}
	pos := h.dictAt
	dict := torn[pos : pos+h.dictLen]
	pos += h.dictLen
	fcsLen := h.size - pos
	if single {
		// The window of a single-segment frame is its content size: the
		// frame written here needs a descriptor at least that large.
		var size uint64
		for i := fcsLen - 1; i >= 0; i-- {
			size = size<<8 | uint64(torn[pos+i])
		}
		if fcsLen == 2 {
			size += 256
		}
		exp := 0
		for exp < 31 && uint64(1)<<(10+exp) < size {
			exp++
		}
		window = byte(exp << 3)
	}
	pos += fcsLen
	var blocks [][]byte // whole blocks, header included
	var partial []byte  // the bytes of a raw block cut short
	for pos+3 <= len(torn) {
		h := uint32(torn[pos]) | uint32(torn[pos+1])<<8 | uint32(torn[pos+2])<<16
		typ, size := (h>>1)&3, int(h>>3)
		if typ == 3 {
			break
		}
		if typ == 1 {
			size = 1
		}
		if pos+3+size > len(torn) {
			if typ == 0 {
				partial = torn[pos+3:]
			}
			break
		}
		blocks = append(blocks, torn[pos:pos+3+size])
		pos += 3 + size
		if h&1 == 1 {
			break
		}
	}
	var out []byte
	if len(blocks) > 0 {
		frame := append(bytes.Clone(zstdMagic), fhd&0x03, window)
		frame = append(frame, dict...)
		for i, b := range blocks {
			start := len(frame)
			frame = append(frame, b...)
			if i == len(blocks)-1 {
				frame[start] |= 1 // the last block
			}
		}
		dec, err := zstd.NewReader(nil, zstd.WithDecoderConcurrency(1))
		if err != nil {
			return nil
		}
		defer dec.Close()
		if out, err = dec.DecodeAll(frame, nil); err != nil {
			return nil
		}
	}
	return append(out, partial...)
}
