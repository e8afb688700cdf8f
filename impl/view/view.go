package view

import (
	"fmt"
	"iter"
	"sort"

	"github.com/surfacelog/surface/impl/message"
)

// leafMax is the most entries a leaf holds; appends fill the mutable tail
// up to it before it is frozen into the tree.
const leafMax = 64

// Entry is one surface node: its order label and its message. Msg.Seq is
// the node's seq; a node that gives no message (SURF-20) has Msg.Role "".
type Entry struct {
	Label int64
	Msg   message.Message
	// Tokens is the node's token count (its message's estimate, or what
	// its provider reported); the view keeps their sum.
	Tokens int
}

func (e *Entry) hasMessage() bool { return e.Msg.Role != "" }

// node is a node of an immutable, height-balanced (AVL) rope of entries
// ordered by label. A leaf holds entries; an inner node holds two
// children. Nodes are never changed once built: an update copies the path
// it touches, so every snapshot keeps seeing what it saw.
type node struct {
	left, right *node
	entries     []Entry // a leaf's entries (nil for an inner node)
	first       int64   // label of the subtree's first entry
	n, m        int     // entries and messages in the subtree
	tok         int     // tokens of the subtree's entries
	height      int8
}

func height(t *node) int8 {
	if t == nil {
		return 0
	}
	return t.height
}

func leafOf(entries []Entry) *node {
	if len(entries) == 0 {
		return nil
	}
	t := &node{entries: entries, first: entries[0].Label, n: len(entries), height: 1}
	for i := range entries {
		if entries[i].hasMessage() {
			t.m++
		}
		t.tok += entries[i].Tokens
	}
	return t
}

func inner(l, r *node) *node {
	return &node{left: l, right: r, first: l.first, n: l.n + r.n, m: l.m + r.m, tok: l.tok + r.tok, height: max(l.height, r.height) + 1}
}

// balance returns a node over a and b (all labels of a before those of b),
// rotating when their heights differ by two.
func balance(a, b *node) *node {
	ha, hb := height(a), height(b)
	switch {
	case ha > hb+1:
		if height(a.left) >= height(a.right) {
			return inner(a.left, inner(a.right, b))
		}
		return inner(inner(a.left, a.right.left), inner(a.right.right, b))
	case hb > ha+1:
		if height(b.right) >= height(b.left) {
			return inner(inner(a, b.left), b.right)
		}
		return inner(inner(a, b.left.left), inner(b.left.right, b.right))
	}
	return inner(a, b)
}

// join concatenates two ropes (all labels of l before those of r) in
// O(|height(l) - height(r)|) new nodes.
func join(l, r *node) *node {
	switch {
	case l == nil:
		return r
	case r == nil:
		return l
	case l.height > r.height+1:
		return balance(l.left, join(l.right, r))
	case r.height > l.height+1:
		return balance(join(l, r.left), r.right)
	}
	return inner(l, r)
}

// split returns the entries with a label below lab and the rest, in
// O(log n) new nodes plus one leaf split.
func split(t *node, lab int64) (*node, *node) {
	switch {
	case t == nil:
		return nil, nil
	case t.entries != nil:
		i := sort.Search(len(t.entries), func(i int) bool { return t.entries[i].Label >= lab })
		if i == 0 {
			return nil, t
		}
		if i == len(t.entries) {
			return t, nil
		}
		return leafOf(t.entries[:i:i]), leafOf(t.entries[i:])
	case lab <= t.right.first:
		l1, l2 := split(t.left, lab)
		return l1, join(l2, t.right)
	default:
		r1, r2 := split(t.right, lab)
		return join(t.left, r1), r2
	}
}

// Builder maintains the view of a changing surface: appends go to a
// mutable tail, frozen into the rope every leafMax entries; a replace is a
// split and a join. Snapshot hands out an immutable view in O(1). A
// Builder is not safe for concurrent use; snapshots are.
type Builder struct {
	root     *node
	tail     []Entry // appended after root; snapshots hold tail[:len:len]
	tailMsgs int
	tailTok  int
}

// Append adds e after every entry: O(1) amortised (O(log n) every leafMax
// appends).
func (b *Builder) Append(e Entry) {
	if b.tail == nil {
		b.tail = make([]Entry, 0, leafMax)
	}
	b.tail = append(b.tail, e)
	if e.hasMessage() {
		b.tailMsgs++
	}
	b.tailTok += e.Tokens
	if len(b.tail) == leafMax {
		b.flush()
	}
}

// flush freezes the tail into the rope. The tail's array becomes the
// leaf's: snapshots that hold a prefix of it see the same entries.
func (b *Builder) flush() {
	b.root = join(b.root, leafOf(b.tail))
	b.tail, b.tailMsgs, b.tailTok = nil, 0, 0
}

// Replace removes the entries whose labels are in [lo, hi] and puts e
// (whose label is lo) in their place: O(log n + leafMax) new memory and
// time, whatever the number of entries removed or the view's length.
func (b *Builder) Replace(lo, hi int64, e Entry) {
	if len(b.tail) > 0 && lo >= b.tail[0].Label {
		// Within the tail: a new array, so snapshots keep the old one.
		i := sort.Search(len(b.tail), func(i int) bool { return b.tail[i].Label >= lo })
		j := sort.Search(len(b.tail), func(i int) bool { return b.tail[i].Label > hi })
		nt := make([]Entry, 0, leafMax)
		nt = append(append(append(nt, b.tail[:i]...), e), b.tail[j:]...)
		b.tail, b.tailMsgs, b.tailTok = nt, 0, 0
		for k := range nt {
			if nt[k].hasMessage() {
				b.tailMsgs++
			}
			b.tailTok += nt[k].Tokens
		}
		return
	}
	if len(b.tail) > 0 {
		b.flush()
	}
	left, rest := split(b.root, lo)
	_, right := split(rest, hi+1)
	b.root = join(join(left, leafOf([]Entry{e})), right)
}

// Snapshot returns an immutable view of the entries now: O(1), no
// allocation.
func (b *Builder) Snapshot() Snapshot {
	return Snapshot{root: b.root, tail: b.tail[:len(b.tail):len(b.tail)], tailMsgs: b.tailMsgs, tailTok: b.tailTok}
}

// Snapshot is an immutable view of a surface at one moment: later
// appends and replaces never change it.
type Snapshot struct {
	root     *node
	tail     []Entry
	tailMsgs int
	tailTok  int
}

// tokens is the sum of the entries' tokens: O(1).
func (s Snapshot) tokens() int {
	if s.root == nil {
		return s.tailTok
	}
	return s.root.tok + s.tailTok
}

func (s Snapshot) nodes() int {
	if s.root == nil {
		return len(s.tail)
	}
	return s.root.n + len(s.tail)
}

func (s Snapshot) messages() int {
	if s.root == nil {
		return s.tailMsgs
	}
	return s.root.m + s.tailMsgs
}

// entryAt returns the i-th entry, counting entries (byMsg false) or only
// entries that give a message (byMsg true).
func (s Snapshot) entryAt(i int, byMsg bool) *Entry {
	count := func(t *node) int {
		if byMsg {
			return t.m
		}
		return t.n
	}
	t := s.root
	if t != nil && i >= count(t) {
		i -= count(t)
		t = nil
	}
	entries := s.tail
	for t != nil {
		if t.entries != nil {
			entries = t.entries
			break
		}
		if c := count(t.left); i < c {
			t = t.left
		} else {
			i -= c
			t = t.right
		}
	}
	for k := range entries {
		if !byMsg || entries[k].hasMessage() {
			if i == 0 {
				return &entries[k]
			}
			i--
		}
	}
	panic("view: index out of range")
}

// walk calls f for every entry in order until f returns false.
func (s Snapshot) walk(f func(*Entry) bool) bool {
	var rec func(t *node) bool
	rec = func(t *node) bool {
		if t == nil {
			return true
		}
		if t.entries != nil {
			for k := range t.entries {
				if !f(&t.entries[k]) {
					return false
				}
			}
			return true
		}
		return rec(t.left) && rec(t.right)
	}
	if !rec(s.root) {
		return false
	}
	for k := range s.tail {
		if !f(&s.tail[k]) {
			return false
		}
	}
	return true
}

// walkFrom calls f for every entry from position i (counting entries) in
// order, until f returns false: O(log n) to find i, then O(1) per entry.
func (s Snapshot) walkFrom(i int, f func(*Entry) bool) {
	var rec func(t *node, i int) bool
	rec = func(t *node, i int) bool {
		if t == nil || i >= t.n {
			return true
		}
		if t.entries != nil {
			for k := i; k < len(t.entries); k++ {
				if !f(&t.entries[k]) {
					return false
				}
			}
			return true
		}
		if i < t.left.n {
			if !rec(t.left, i) {
				return false
			}
			return rec(t.right, 0)
		}
		return rec(t.right, i-t.left.n)
	}
	if !rec(s.root, i) {
		return
	}
	if s.root != nil {
		i -= s.root.n
	}
	for k := max(i, 0); k < len(s.tail); k++ {
		if !f(&s.tail[k]) {
			return
		}
	}
}

// Position returns the position (counting entries) of the entry with the
// given label, in O(log n); ok is false when no entry has it.
func (s Snapshot) Position(label int64) (pos int, ok bool) {
	if len(s.tail) > 0 && label >= s.tail[0].Label {
		i := sort.Search(len(s.tail), func(i int) bool { return s.tail[i].Label >= label })
		if i < len(s.tail) && s.tail[i].Label == label {
			return s.nodes() - len(s.tail) + i, true
		}
		return 0, false
	}
	t := s.root
	for t != nil {
		if t.entries != nil {
			i := sort.Search(len(t.entries), func(i int) bool { return t.entries[i].Label >= label })
			if i < len(t.entries) && t.entries[i].Label == label {
				return pos + i, true
			}
			return 0, false
		}
		if label < t.right.first {
			t = t.left
		} else {
			pos += t.left.n
			t = t.right
		}
	}
	return 0, false
}

// Messages returns the messages of the snapshot.
func (s Snapshot) Messages() Messages { return Messages{s} }

// Seqs returns the seqs of the snapshot's nodes.
func (s Snapshot) Seqs() Seqs { return Seqs{s} }

// Messages is an immutable view of the messages derived from a surface
// (SURF-19), head to tail. Its zero value is empty.
type Messages struct{ s Snapshot }

// Len is the number of messages.
func (v Messages) Len() int { return v.s.messages() }

// Tokens is the token count of the messages (the sum of their nodes'
// tokens): O(1), kept as the view changes.
func (v Messages) Tokens() int { return v.s.tokens() }

// At returns message i, 0 <= i < Len(): O(log n). It panics when i is out
// of range, like a slice index.
func (v Messages) At(i int) message.Message {
	if i < 0 || i >= v.Len() {
		panic("view: message index out of range")
	}
	return v.s.entryAt(i, true).Msg
}

// All yields the messages with their indexes, head to tail.
func (v Messages) All() iter.Seq2[int, message.Message] {
	return func(yield func(int, message.Message) bool) {
		i := 0
		v.s.walk(func(e *Entry) bool {
			if !e.hasMessage() {
				return true
			}
			i++
			return yield(i-1, e.Msg)
		})
	}
}

// AppendTo appends the messages to dst and returns the extended slice.
func (v Messages) AppendTo(dst []message.Message) []message.Message {
	dst = growBy(dst, v.Len())
	v.s.walk(func(e *Entry) bool {
		if e.hasMessage() {
			dst = append(dst, e.Msg)
		}
		return true
	})
	return dst
}

// Slice returns the messages as a new slice (AppendTo(nil), never nil).
func (v Messages) Slice() []message.Message {
	return v.AppendTo(make([]message.Message, 0, v.Len()))
}

// Seqs is an immutable view of the seqs of the surface nodes, head to
// tail. Its zero value is empty.
type Seqs struct{ s Snapshot }

// Len is the number of surface nodes.
func (v Seqs) Len() int { return v.s.nodes() }

// At returns the seq of node i, 0 <= i < Len(): O(log n).
func (v Seqs) At(i int) int64 {
	if i < 0 || i >= v.Len() {
		panic("view: surface index out of range")
	}
	return v.s.entryAt(i, false).Msg.Seq
}

// All yields the seqs with their indexes, head to tail.
func (v Seqs) All() iter.Seq2[int, int64] {
	return func(yield func(int, int64) bool) {
		i := 0
		v.s.walk(func(e *Entry) bool {
			i++
			return yield(i-1, e.Msg.Seq)
		})
	}
}

// AppendTo appends the seqs to dst and returns the extended slice.
func (v Seqs) AppendTo(dst []int64) []int64 {
	dst = growBy(dst, v.Len())
	v.s.walk(func(e *Entry) bool {
		dst = append(dst, e.Msg.Seq)
		return true
	})
	return dst
}

// Range calls f with the seq and the message of nodes i to j-1 (a node
// that gives no message has Role ""), in order, until f returns false:
// O(log n + j - i).
func (v Seqs) Range(i, j int, f func(seq int64, m message.Message) bool) {
	if i < 0 || j > v.Len() || i > j {
		panic("view: surface range out of bounds")
	}
	n := j - i
	if n == 0 {
		return
	}
	v.s.walkFrom(i, func(e *Entry) bool {
		n--
		return f(e.Msg.Seq, e.Msg) && n > 0
	})
}

// Slice returns the seqs as a new slice (AppendTo(nil), never nil).
func (v Seqs) Slice() []int64 { return v.AppendTo(make([]int64, 0, v.Len())) }

func growBy[T any](dst []T, n int) []T {
	if cap(dst)-len(dst) < n {
		grown := make([]T, len(dst), len(dst)+n)
		copy(grown, dst)
		return grown
	}
	return dst
}

// String formats the seqs like a slice: [1 3].
func (v Seqs) String() string { return fmt.Sprint(v.Slice()) }

// String formats the messages like a slice.
func (v Messages) String() string { return fmt.Sprint(v.Slice()) }
