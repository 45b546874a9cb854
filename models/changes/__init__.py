"""Every change to a memory or an agent's settings: the one mutation path (`mutations`, `ttl`, `dedup`,
over the checks in `rules` and the locked rows of `rows`), the consent policy's held patches (`patches`,
`patch_tables`), restore, and the Time Machine that reverses any change exactly. Each change writes its
audit record in the same transaction (docs/explanation/architecture.md, "Transactions")."""
