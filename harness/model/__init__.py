"""The bottom room: what every other room speaks in (cases, records, run meta, settings, the ABI, exit codes,
the codec, the operator registry); it imports no other room."""
