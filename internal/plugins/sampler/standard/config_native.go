//go:build !wasip1

package standard

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// ParseConfig reads a JSON config object (empty for none) over
// DefaultConfig, exactly as the plugin reads it through the host (the
// values config_get would give); a key not in Keys is an error. Native builds only: it uses encoding/json,
// which a wasip1 guest cannot import (see abi/guest).
func ParseConfig(raw []byte) (Config, error) {
	values := map[string][]byte{}
	if len(bytes.TrimSpace(raw)) > 0 {
		if err := CheckKeys(raw); err != nil {
			return Config{}, err
		}
		var obj map[string]json.RawMessage
		if err := json.Unmarshal(raw, &obj); err != nil {
			return Config{}, fmt.Errorf("%w: %v", ErrConfig, err)
		}
		for k, v := range obj {
			var s string
			if json.Unmarshal(v, &s) == nil {
				values[k] = []byte(s)
				continue
			}
			var buf bytes.Buffer
			if err := json.Compact(&buf, v); err != nil {
				return Config{}, fmt.Errorf("%w: %v", ErrConfig, err)
			}
			values[k] = buf.Bytes()
		}
	}
	return readConfig(func(key string) ([]byte, bool) { v, ok := values[key]; return v, ok })
}
