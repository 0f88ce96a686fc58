"""Judging a row: the precision criteria (the ops-blas verify.h port and the golden trust rule), the memory footprint,
and mutants (does the judge catch broken kernels?)."""
