package explore

import (
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// ParseDump reads the states of a TLC -dump file and returns each in the
// canonical form of State.Canonical, so that the set TLC found and the set
// the explorer found can be compared by Digest.
//
// A dump is a list of blocks "State N:" followed by one conjunct per
// variable, "/\ name = value", values possibly spanning lines. Values are
// TLA+ sequences, sets, records, strings, integers and booleans.
func ParseDump(text string) ([]string, error) {
	var out []string
	blocks := strings.Split(text, "\nState ")
	for bi, block := range blocks {
		block = strings.TrimSpace(block)
		if bi == 0 {
			block = strings.TrimPrefix(block, "State ")
		}
		if block == "" {
			continue
		}
		_, body, ok := strings.Cut(block, ":")
		if !ok {
			return nil, fmt.Errorf("dump block %d: no \"State N:\" header", bi)
		}
		fields := map[string]value{}
		for _, conj := range strings.Split(body, `/\ `)[1:] {
			name, v, ok := strings.Cut(conj, " = ")
			if !ok {
				return nil, fmt.Errorf("dump block %d: bad conjunct %q", bi, conj)
			}
			p := &parser{toks: tokenize(v)}
			val, err := p.value()
			if err != nil {
				return nil, fmt.Errorf("dump block %d, %s: %v", bi, strings.TrimSpace(name), err)
			}
			if p.i != len(p.toks) {
				return nil, fmt.Errorf("dump block %d, %s: trailing %q", bi, strings.TrimSpace(name), p.toks[p.i:])
			}
			fields[strings.TrimSpace(name)] = val
		}
		if len(fields) == 0 {
			return nil, fmt.Errorf("dump block %d: no variables", bi)
		}
		out = append(out, value{kind: "record", fields: fields}.canonical())
	}
	return out, nil
}

type value struct {
	kind   string // "int", "string", "bool", "seq", "set", "record"
	atom   string
	elems  []value
	fields map[string]value
}

func (v value) canonical() string {
	switch v.kind {
	case "string":
		return strconv.Quote(v.atom)
	case "int", "bool":
		return v.atom
	case "seq":
		return "<<" + joinValues(v.elems) + ">>"
	case "set":
		elems := slices.Clone(v.elems)
		sort.SliceStable(elems, func(a, b int) bool {
			x, errx := strconv.ParseInt(elems[a].atom, 10, 64)
			y, erry := strconv.ParseInt(elems[b].atom, 10, 64)
			if elems[a].kind == "int" && elems[b].kind == "int" && errx == nil && erry == nil {
				return x < y
			}
			return elems[a].canonical() < elems[b].canonical()
		})
		return "{" + joinValues(elems) + "}"
	default:
		names := make([]string, 0, len(v.fields))
		for n := range v.fields {
			names = append(names, n)
		}
		sort.Strings(names)
		parts := make([]string, len(names))
		for i, n := range names {
			parts[i] = n + " |-> " + v.fields[n].canonical()
		}
		return "[" + strings.Join(parts, ", ") + "]"
	}
}

func joinValues(vs []value) string {
	parts := make([]string, len(vs))
	for i, v := range vs {
		parts[i] = v.canonical()
	}
	return strings.Join(parts, ", ")
}

func tokenize(s string) []string {
	var toks []string
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == ' ' || c == '\n' || c == '\t' || c == '\r':
			i++
		case strings.HasPrefix(s[i:], "<<"), strings.HasPrefix(s[i:], ">>"):
			toks = append(toks, s[i:i+2])
			i += 2
		case strings.HasPrefix(s[i:], "|->"):
			toks = append(toks, "|->")
			i += 3
		case strings.ContainsRune("{}[],", rune(c)):
			toks = append(toks, string(c))
			i++
		case c == '"':
			j := i + 1
			for j < len(s) && s[j] != '"' {
				if s[j] == '\\' {
					j++
				}
				j++
			}
			toks = append(toks, s[i:min(j+1, len(s))])
			i = j + 1
		default:
			j := i
			for j < len(s) && !strings.ContainsRune(" \n\t\r{}[],<>|\"", rune(s[j])) {
				j++
			}
			if j == i {
				j++ // a stray character: its own token, which the parser rejects
			}
			toks = append(toks, s[i:j])
			i = j
		}
	}
	return toks
}

type parser struct {
	toks []string
	i    int
}

func (p *parser) next() string {
	if p.i >= len(p.toks) {
		return ""
	}
	p.i++
	return p.toks[p.i-1]
}

func (p *parser) peek() string {
	if p.i >= len(p.toks) {
		return ""
	}
	return p.toks[p.i]
}

func (p *parser) list(closer string, item func() error) error {
	if p.peek() == closer {
		p.next()
		return nil
	}
	for {
		if err := item(); err != nil {
			return err
		}
		switch t := p.next(); t {
		case ",":
		case closer:
			return nil
		default:
			return fmt.Errorf("expected , or %s, got %q", closer, t)
		}
	}
}

func (p *parser) value() (value, error) {
	t := p.next()
	switch {
	case t == "<<" || t == "{":
		v := value{kind: "seq"}
		closer := ">>"
		if t == "{" {
			v.kind, closer = "set", "}"
		}
		err := p.list(closer, func() error {
			e, err := p.value()
			v.elems = append(v.elems, e)
			return err
		})
		return v, err
	case t == "[":
		v := value{kind: "record", fields: map[string]value{}}
		err := p.list("]", func() error {
			name := p.next()
			if arrow := p.next(); arrow != "|->" {
				return fmt.Errorf("expected |-> after %q, got %q", name, arrow)
			}
			e, err := p.value()
			v.fields[name] = e
			return err
		})
		return v, err
	case strings.HasPrefix(t, `"`) && len(t) >= 2 && strings.HasSuffix(t, `"`):
		s, err := strconv.Unquote(t)
		return value{kind: "string", atom: s}, err
	case t == "TRUE" || t == "FALSE":
		return value{kind: "bool", atom: t}, nil
	default:
		if _, err := strconv.ParseInt(t, 10, 64); err != nil {
			return value{}, fmt.Errorf("unexpected %q", t)
		}
		return value{kind: "int", atom: t}, nil
	}
}
