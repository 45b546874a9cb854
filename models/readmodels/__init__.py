"""Read-only queries behind the admin console: metadata only, never memory text
(ARCHITECTURE.md, "Privacy")."""
