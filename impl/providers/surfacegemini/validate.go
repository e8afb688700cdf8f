package surfacegemini

import (
	"google.golang.org/genai"

	"github.com/surfacelog/surface/impl/providers/convo"
)

// Validate checks contents, as they go on the wire, against Gemini's
// rules and returns every violation with its index: roles are user or
// model; the first content is the user's; user and model alternate; no
// content is without parts; a functionResponse answers a functionCall of
// the model content just before it, with the same name, once, and comes
// before the other parts of its content; every functionCall is answered
// in the next content; no call id is used twice.
func Validate(contents []*genai.Content) []convo.Violation {
	type call struct {
		ID   string `json:"id"`
		Name string `json:"name"`
	}
	var wire []struct {
		Role  string `json:"role"`
		Parts []struct {
			Text             string `json:"text"`
			FunctionCall     *call  `json:"functionCall"`
			FunctionResponse *call  `json:"functionResponse"`
		} `json:"parts"`
	}
	if v := convo.Wire(contents, &wire); v != nil {
		return v
	}
	var c convo.Collector
	add := c.Add
	seen := map[string]bool{}
	var open []call
	for i, content := range wire {
		switch {
		case content.Role != genai.RoleUser && content.Role != genai.RoleModel:
			add(i, "roles", "role %q", content.Role)
		case i == 0 && content.Role != genai.RoleUser:
			add(i, "first_user", "the first content is the %s's", content.Role)
		case i > 0 && content.Role == wire[i-1].Role:
			add(i, "alternation", "two %s contents in a row", content.Role)
		}
		if len(content.Parts) == 0 {
			add(i, "empty_content", "a content without parts")
		}
		answered := map[string]bool{}
		past := false
		for k, p := range content.Parts {
			switch {
			case p.FunctionResponse != nil:
				r := *p.FunctionResponse
				if past {
					add(i, "results_first", "functionResponse for %q at part %d comes after another part", r.ID, k)
				}
				match := -1
				for j, o := range open {
					if o.ID == r.ID {
						match = j
					}
				}
				switch {
				case answered[r.ID]:
					add(i, "duplicate_result", "a second functionResponse for %q", r.ID)
				case match < 0 || content.Role != genai.RoleUser:
					add(i, "result_without_call", "functionResponse for %q answers no functionCall of the content before", r.ID)
				case open[match].Name != r.Name:
					add(i, "name", "functionResponse for %q names %q, the call %q", r.ID, r.Name, open[match].Name)
				}
				answered[r.ID] = true
			case p.FunctionCall != nil:
				past = true
				if content.Role != genai.RoleModel {
					add(i, "roles", "a functionCall in a %s content", content.Role)
				}
				if seen[p.FunctionCall.ID] {
					add(i, "duplicate_call", "call id %q is used twice", p.FunctionCall.ID)
				}
				seen[p.FunctionCall.ID] = true
			default:
				past = true
			}
		}
		for _, o := range open {
			if !answered[o.ID] {
				add(i, "call_without_result", "functionCall %q of content %d is not answered here", o.ID, i-1)
			}
		}
		open = nil
		if content.Role == genai.RoleModel {
			for _, p := range content.Parts {
				if p.FunctionCall != nil {
					open = append(open, *p.FunctionCall)
				}
			}
		}
	}
	for _, o := range open {
		add(len(wire), "call_without_result", "functionCall %q of the last content is not answered", o.ID)
	}
	return c.List
}
