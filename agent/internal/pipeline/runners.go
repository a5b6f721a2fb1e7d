package pipeline

// removeRunner takes the named runner out of rs (a Kafka sink; a fanout
// schema stops through stopFanout, which also leaves its members group)
// and stops it with stop, logging msg with the name under key; a
// name that does not run is no error. It serialises with the manager's
// other changes.
func removeRunner[R any](m *Manager, rs map[string]*R, name string, stop func(*R), key, msg string) {
	m.changeMu.Lock()
	defer m.changeMu.Unlock()
	m.mu.Lock()
	r := rs[name]
	delete(rs, name)
	m.mu.Unlock()
	if r != nil {
		stop(r)
		m.log.Info(msg, key, name)
	}
}

// runnerStatus reports the named runner of rs with report; ok is false
// when it does not run.
func runnerStatus[R, S any](m *Manager, rs map[string]*R, name string, report func(*R) S) (status S, ok bool) {
	m.mu.Lock()
	r := rs[name]
	m.mu.Unlock()
	if r == nil {
		return status, false
	}
	return report(r), true
}
