"""What a run leaves behind: the record and meta models, the one codec, the one reader of stored runs, the session that
writes them, the history, provenance."""
