package vulnstore

import "github.com/periscope-oss/periscope/internal/store"

// Core is the core store, for tests that read the tables directly.
func (s *Store) Core() *store.Store { return s.st }

// SyncsTextIndex reports whether the engine keeps FTS5 tables in step.
func (s *Store) SyncsTextIndex() bool { return s.d.syncsTextIndex() }
