package event

import "fmt"

// FieldKind is the JSON kind a catalog field must have (SURF-5).
type FieldKind uint8

const (
	KindAny     FieldKind = iota // any JSON value
	KindInteger                  // a number with an integral value
	KindString                   // a string (optionally one of Enum)
	KindBoolean                  // true or false
	KindArray                    // an array
	KindObject                   // an object
	KindBlocks                   // an array of objects, each with a string "type"
	KindTagged                   // an object with a string "kind"
)

// FieldSpec describes one data field of an event type.
type FieldSpec struct {
	Name     string
	Kind     FieldKind
	Required bool
	// Enum, when non-empty, lists the values a string field may hold.
	Enum []string
	// Tags lists the known kinds of a tagged field (documentation only).
	Tags []string
	// Nullable allows the value null besides the field's kind.
	Nullable bool
}

// TypeSpec describes one event type of the catalog (spec/events.json).
type TypeSpec struct {
	Type Type
	// Surface reports whether the type is surface-eligible: its events
	// become LLM messages and must carry a surfaceOp marker (SURF-7).
	Surface bool
	Fields  []FieldSpec
	Doc     string
}

// Lookup returns the catalog entry of t.
func Lookup(t Type) (*TypeSpec, bool) {
	i, ok := catalogIndex(t)
	if !ok {
		return nil, false
	}
	return &catalog[i], true
}

// Known reports whether t is in the catalog (SURF-3).
func Known(t Type) bool {
	_, ok := catalogIndex(t)
	return ok
}

// IsSurface reports whether t is a surface-eligible type.
func IsSurface(t Type) bool {
	i, ok := catalogIndex(t)
	return ok && catalog[i].Surface
}

// Types returns every catalog type, in catalog order.
func Types() []Type {
	out := make([]Type, len(catalog))
	for i := range catalog {
		out[i] = catalog[i].Type
	}
	return out
}

// Codes returns every error code, in check order (SURF-16).
func Codes() []Code { return append([]Code(nil), allCodes...) }

// catalogIndex returns the index in the catalog of t, which every event
// checked, decoded or folded asks for, without a map: a hash of t's length
// and three of its bytes picks a slot of catalogSlots, which holds the
// index (plus one) of the only type that hashes there, and that type is
// compared with t.
func catalogIndex(t Type) (int, bool) {
	if len(t) == 0 {
		return 0, false
	}
	i := catalogSlots[slotOf(t, catalogMul)]
	if i == 0 || catalog[i-1].Type != t {
		return 0, false
	}
	return int(i - 1), true
}

const slotBits = 7

func slotOf(t Type, mul uint32) uint32 {
	k := uint32(len(t)) | uint32(t[0])<<8 | uint32(t[len(t)/2])<<16 | uint32(t[len(t)-1])<<24
	return k * mul >> (32 - slotBits)
}

// catalogSlots and catalogMul: the first odd multiplier (from a fixed
// start) under which no two catalog types share a slot. The catalog is
// fixed at build time, so this is found once; TestCatalogIndex checks
// that every type is found and that look-alikes are not.
var catalogSlots, catalogMul = func() (slots [1 << slotBits]uint8, mul uint32) {
	// 21 types in 128 slots: about one multiplier in six will do. A
	// catalog grown past what the table can hold fails here, at once,
	// rather than searching for ever.
	for mul = 0x9e3779b1; mul < 0x9e3779b1+1<<17; mul += 2 {
		slots = [1 << slotBits]uint8{}
		ok := true
		for i := range catalog {
			h := slotOf(catalog[i].Type, mul)
			if slots[h] != 0 {
				ok = false
				break
			}
			slots[h] = uint8(i + 1)
		}
		if ok {
			return slots, mul
		}
	}
	panic(fmt.Sprintf("event: no slot table for the %d catalog types: raise slotBits", len(catalog)))
}()
