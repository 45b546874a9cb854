"""memory.query: ranking, dense vectors, common-word statistics, relation edges and embeddings,
and the batched bookkeeping of reads (access times, search events)."""
