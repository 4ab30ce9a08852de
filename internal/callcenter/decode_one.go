package callcenter

import (
	"bytes"
	"encoding/json"
	"errors"

	"github.com/callbus/callbus/internal/apijson"
)

// decodeOne decodes a single-record response into v. When the response is an
// object whose only key is wrap ({"bulk_job": {...}}), the record is taken from
// under it; otherwise the response is the record itself. Both shapes are accepted
// whatever the spec says for the operation, since drift moves between them.
func decodeOne(body []byte, wrap string, v any) error {
	if b := bytes.TrimSpace(body); len(b) > 0 && b[0] == '{' {
		var obj map[string]json.RawMessage
		if err := json.Unmarshal(b, &obj); err == nil && len(obj) == 1 {
			if inner, ok := obj[wrap]; ok {
				body = inner
			}
		}
	}
	if apijson.IsNull(body) {
		return errors.New("empty response: null")
	}
	return json.Unmarshal(body, v)
}
