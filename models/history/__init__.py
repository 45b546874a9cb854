"""What happened, kept for ever: the audit log and its contents, the delta header's change log,
operational events, refinement session records, and a memory's history as its agent reads it."""
