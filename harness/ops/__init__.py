"""The operator packages, one per operator (their registry is harness.model.operators)."""
