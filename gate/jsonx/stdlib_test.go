package jsonx

import "encoding/json"

// Tests may compare against encoding/json; the package itself never imports it.
var jsonUnmarshal = json.Unmarshal
