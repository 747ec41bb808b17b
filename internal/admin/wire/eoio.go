package wire

// EOIOSwitchBody is the body of POST /v1/eoio/switch. Queues is a number,
// or the text an operator typed, which the service checks and audits.
type EOIOSwitchBody struct {
	Queues TuneValue `json:"queues"`
}
