"""Process plumbing shared by the web app, the CLI and the workers: the Redis connection and the RQ
queues (`queues`), and the embedded Redis server the demo and the tests run on (`embedded_redis`).

Nothing here knows about memories: `infra` imports neither `models`, `jobs` nor `console`
(docs/explanation/architecture.md, "Layers").
"""
