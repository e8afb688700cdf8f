package event

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
	i, ok := catalogIndex[t]
	if !ok {
		return nil, false
	}
	return &catalog[i], true
}

// Known reports whether t is in the catalog (SURF-3).
func Known(t Type) bool {
	_, ok := catalogIndex[t]
	return ok
}

// IsSurface reports whether t is a surface-eligible type.
func IsSurface(t Type) bool {
	i, ok := catalogIndex[t]
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

var catalogIndex = func() map[Type]int {
	m := make(map[Type]int, len(catalog))
	for i := range catalog {
		m[catalog[i].Type] = i
	}
	return m
}()
