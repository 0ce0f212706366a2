package store

import "context"

func (s *Store) wakeProjector() {
	select {
	case s.projectWake <- struct{}{}:
	default:
	}
}

func (s *Store) runProjector(ctx context.Context) {
	defer close(s.projectDone)
	<-ctx.Done()
}
