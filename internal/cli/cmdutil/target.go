package cmdutil

// StoreTarget returns the store the commands work on, when they work on one
// — a bbolt file (directly or through the socket of the process holding
// it) or a PostgreSQL database — and false when they work on a server
// (--server, or a context's).
func (f *Factory) StoreTarget() (StoreLocation, bool) {
	c, err := f.Config()
	if err != nil {
		return StoreLocation{}, false
	}
	if server, _, err := remoteTarget(c); err != nil || server != "" {
		return StoreLocation{}, false
	}
	loc, err := ResolveStore(c)
	return loc, err == nil
}
