"""The top room: flows that compose the others (a session writing its reports, A/B runs, mutants, msprof)."""
