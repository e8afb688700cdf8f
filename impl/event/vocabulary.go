package event

import "strings"

// Vocabulary is the set of event types a session knows (SURF-3): the
// catalog of spec/events.json, plus the log-only types a program registers
// for its own records. A registered type is checked like a catalog type
// (its data shape, when given, by SURF-5) and is never surface-eligible:
// surface eligibility is the closed set of the catalog. The nil
// *Vocabulary is the catalog alone.
type Vocabulary struct {
	extra map[Type]*TypeSpec
}

// NewVocabulary returns the catalog extended by specs. Each spec names a
// new type (not one of the catalog), is not surface-eligible, and lists
// its data fields (possibly none: any data object is accepted). A spec
// that breaks this is rejected with vocabulary.invalid.
func NewVocabulary(specs ...TypeSpec) (*Vocabulary, error) {
	v := &Vocabulary{extra: make(map[Type]*TypeSpec, len(specs))}
	for i := range specs {
		s := specs[i]
		switch {
		case s.Type == "" || strings.TrimSpace(string(s.Type)) != string(s.Type):
			return nil, Errorf(CodeVocabularyInvalid, -1, "type %q: a type name must be non-empty, without surrounding space", s.Type)
		case Known(s.Type):
			return nil, Errorf(CodeVocabularyInvalid, -1, "type %q is in the catalog; a program registers only new types", s.Type)
		case v.extra[s.Type] != nil:
			return nil, Errorf(CodeVocabularyInvalid, -1, "type %q is registered twice", s.Type)
		case s.Surface:
			return nil, Errorf(CodeVocabularyInvalid, -1, "type %q: a registered type cannot be surface-eligible (the surface types are a closed set)", s.Type)
		}
		names := map[string]bool{}
		for _, f := range s.Fields {
			if f.Name == "" || names[f.Name] || f.Kind > KindTagged || (len(f.Enum) > 0 && f.Kind != KindString) {
				return nil, Errorf(CodeVocabularyInvalid, -1, "type %q: field %q is empty, repeated, of an unknown kind, or an enum on a non-string", s.Type, f.Name)
			}
			names[f.Name] = true
		}
		s.Fields = append([]FieldSpec(nil), s.Fields...)
		v.extra[s.Type] = &s
	}
	return v, nil
}

// Lookup returns the spec of t: a catalog type or a registered one.
func (v *Vocabulary) Lookup(t Type) (*TypeSpec, bool) {
	if spec, ok := Lookup(t); ok {
		return spec, true
	}
	if v == nil {
		return nil, false
	}
	spec, ok := v.extra[t]
	return spec, ok
}

// Known reports whether t is a catalog or registered type.
func (v *Vocabulary) Known(t Type) bool {
	_, ok := v.Lookup(t)
	return ok
}

// Registered returns the registered types' specs.
func (v *Vocabulary) Registered() []TypeSpec {
	if v == nil {
		return nil
	}
	out := make([]TypeSpec, 0, len(v.extra))
	for _, s := range v.extra {
		out = append(out, *s)
	}
	return out
}

// Check checks the event-local rules SURF-1 to SURF-9 for e as the
// candidate at index wantSeq of a log of a session with this vocabulary,
// in the order of SURF-16 (see the package-level Check).
func (v *Vocabulary) Check(e *Event, wantSeq int64) *Error { return v.check(e, wantSeq, false) }
