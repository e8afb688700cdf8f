package surfacegemini

import (
	"encoding/json"
	"slices"

	"google.golang.org/genai"

	"github.com/surfacelog/surface/impl/providers/convo"
)

// Rules lists what Validate checks, by rule name.
var Rules = []string{
	"roles", "first_user", "alternation", "empty_content", "empty_text", "unknown_part",
	"result_without_call", "results_first", "duplicate_result", "name", "call_without_result", "duplicate_call",
}

// Validate checks contents, as they go on the wire, against Gemini's
// rules and returns every violation with its index: roles are user or
// model; the first content is the user's; user and model alternate; no
// content is without parts; no part is empty (a text part with no text
// and no thought signature, or one with nothing Gemini knows); a
// functionResponse answers a functionCall of the model content just
// before it (by id, or by name when the call had none), with the same
// name, once, and comes before the other parts of its content; every
// functionCall is answered in the next content; no call id is used twice.
func Validate(contents []*genai.Content) []convo.Violation {
	raw, err := json.Marshal(contents)
	if err != nil {
		return []convo.Violation{{Index: -1, Rule: "encoding", Detail: err.Error()}}
	}
	return ValidateJSON(raw)
}

// ValidateJSON checks the contents of a request body, as JSON.
func ValidateJSON(contents []byte) []convo.Violation {
	type call struct {
		ID   string `json:"id"`
		Name string `json:"name"`
	}
	var wire []struct {
		Role  string                       `json:"role"`
		Parts []map[string]json.RawMessage `json:"parts"`
	}
	if err := json.Unmarshal(contents, &wire); err != nil {
		return []convo.Violation{{Index: -1, Rule: "encoding", Detail: err.Error()}}
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
		answered := map[int]bool{} // index in open
		past := false
		for k, p := range content.Parts {
			var fc, fr *call
			if v, ok := p["functionCall"]; ok {
				fc = &call{}
				_ = json.Unmarshal(v, fc)
			}
			if v, ok := p["functionResponse"]; ok {
				fr = &call{}
				_ = json.Unmarshal(v, fr)
			}
			var text string
			_ = json.Unmarshal(p["text"], &text)
			data := false
			for key := range p {
				switch key {
				case "text", "thought", "thoughtSignature", "partMetadata", "videoMetadata", "mediaResolution":
				default:
					data = true
				}
			}
			_, signed := p["thoughtSignature"]
			switch {
			case !data && text == "" && !signed:
				add(i, "empty_text", "part %d has no text (and no thought signature)", k)
			case !data && text == "":
				// a signature-only part: allowed
			}
			for key := range p {
				if !slices.Contains(partKeys, key) {
					add(i, "unknown_part", "part %d has %q, which Gemini does not know", k, key)
				}
			}
			switch {
			case fr != nil:
				r := *fr
				if past {
					add(i, "results_first", "functionResponse for %q at part %d comes after another part", r.ID, k)
				}
				match := -1
				for j, o := range open {
					if answered[j] {
						continue
					}
					if r.ID != "" && o.ID == r.ID || r.ID == "" && o.ID == "" && o.Name == r.Name {
						match = j
						break
					}
				}
				twice := false
				for j, o := range open {
					if answered[j] && r.ID != "" && o.ID == r.ID {
						twice = true
					}
				}
				switch {
				case twice:
					add(i, "duplicate_result", "a second functionResponse for %q", r.ID)
				case match < 0 || content.Role != genai.RoleUser:
					add(i, "result_without_call", "functionResponse for %q (%s) answers no functionCall of the content before", r.ID, r.Name)
				case open[match].Name != r.Name:
					add(i, "name", "functionResponse for %q names %q, the call %q", r.ID, r.Name, open[match].Name)
				}
				if match >= 0 {
					answered[match] = true
				}
			case fc != nil:
				past = true
				if content.Role != genai.RoleModel {
					add(i, "roles", "a functionCall in a %s content", content.Role)
				}
				if fc.ID != "" && seen[fc.ID] {
					add(i, "duplicate_call", "call id %q is used twice", fc.ID)
				}
				seen[fc.ID] = true
			default:
				past = true
			}
		}
		for j, o := range open {
			if !answered[j] {
				add(i, "call_without_result", "functionCall %q (%s) of content %d is not answered here", o.ID, o.Name, i-1)
			}
		}
		open = nil
		if content.Role == genai.RoleModel {
			for _, p := range content.Parts {
				if v, ok := p["functionCall"]; ok {
					var fc call
					_ = json.Unmarshal(v, &fc)
					open = append(open, fc)
				}
			}
		}
	}
	for _, o := range open {
		add(len(wire), "call_without_result", "functionCall %q (%s) of the last content is not answered", o.ID, o.Name)
	}
	return c.List
}

// partKeys are the members a Part may have on the wire.
var partKeys = []string{"text", "thought", "thoughtSignature", "inlineData", "fileData", "functionCall", "functionResponse",
	"executableCode", "codeExecutionResult", "toolCall", "toolResponse", "videoMetadata", "mediaResolution", "partMetadata"}
