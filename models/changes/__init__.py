"""Every change to a memory or an agent's settings: the one mutation path, the consent policy's
held patches, restore, and the Time Machine that reverses any change exactly. Each change writes its
audit record in the same transaction (ARCHITECTURE.md, "Transactions")."""
