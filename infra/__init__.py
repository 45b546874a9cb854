"""Process plumbing shared by the web app, the CLI and the workers: the Redis connection and the RQ
queues (`queues`), the embedded Redis server the demo and the tests run on (`embedded_redis`), and the
collector kept away from a process's long-lived objects (`heap`).

Nothing here knows about memories: `infra` imports neither `models`, `jobs` nor `console`
(docs/explanation/architecture.md, "Layers").
"""
