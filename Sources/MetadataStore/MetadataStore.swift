/// The metadata cache: SQLite schema, naming, placements, refresh diffing, user state.
