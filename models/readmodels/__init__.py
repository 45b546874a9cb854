"""Read-only queries behind the admin console: metadata only, never memory text
(docs/explanation/architecture.md, "Privacy: who may read memory text")."""
