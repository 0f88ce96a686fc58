"""ops-blas acceptance harness: CSV case tables in, verdicts, reports and performance history out."""
