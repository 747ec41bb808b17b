package httpapi

import _ "embed"

// OpenAPI is the OpenAPI 3 document of the API, served at /v1/openapi.json.
//
//go:embed openapi.json
var OpenAPI []byte
