"""LangGraph's checkpoint data model and store mapping, per agent (docs/how-to/langgraph.md)

Revision ID: 0010
Revises: 0009
Create Date: 2026-11-23

- `langgraph_checkpoints`: one row per (agent, thread, namespace, checkpoint id) with its parent id,
  the checkpoint document (channel values excluded) and its metadata.
- `langgraph_blobs`: channel values, one per (agent, thread, namespace, channel, version).
- `langgraph_writes`: pending writes per (agent, thread, namespace, checkpoint, task, index).
- `langgraph_store_items`: the (namespace, key) of a LangGraph store item and the memory holding it.

`size_bytes` on the first three is what the per-agent checkpoint quota counts (models/agents/quotas.py).
Every table belongs to an agent with ON DELETE CASCADE; store items also cascade from their memory
(a TTL purge removes the row).
"""

import sqlalchemy as sa
from alembic import op

revision = "0010"
down_revision = "0009"
branch_labels = None
depends_on = None


def _agent_fk(table):
    return sa.ForeignKeyConstraint(
        ["agent_id"], ["agents.id"], name=op.f(f"fk_{table}_agent_id_agents"), ondelete="CASCADE"
    )


def upgrade():
    op.create_table(
        "langgraph_checkpoints",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("agent_id", sa.Integer(), nullable=False),
        sa.Column("thread_id", sa.String(length=255), nullable=False),
        sa.Column("checkpoint_ns", sa.String(length=255), nullable=False),
        sa.Column("checkpoint_id", sa.String(length=128), nullable=False),
        sa.Column("parent_checkpoint_id", sa.String(length=128), nullable=True),
        sa.Column("checkpoint", sa.JSON(), nullable=False),
        sa.Column("metadata", sa.JSON(), nullable=False),
        sa.Column("size_bytes", sa.Integer(), nullable=False),
        sa.Column("created_at", sa.DateTime(), nullable=False),
        _agent_fk("langgraph_checkpoints"),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_langgraph_checkpoints")),
    )
    op.create_index(
        "uq_langgraph_checkpoints_key",
        "langgraph_checkpoints",
        ["agent_id", "thread_id", "checkpoint_ns", "checkpoint_id"],
        unique=True,
    )
    op.create_table(
        "langgraph_blobs",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("agent_id", sa.Integer(), nullable=False),
        sa.Column("thread_id", sa.String(length=255), nullable=False),
        sa.Column("checkpoint_ns", sa.String(length=255), nullable=False),
        sa.Column("channel", sa.String(length=255), nullable=False),
        sa.Column("version", sa.String(length=128), nullable=False),
        sa.Column("type", sa.String(length=64), nullable=False),
        sa.Column("blob", sa.LargeBinary(), nullable=True),
        sa.Column("size_bytes", sa.Integer(), nullable=False),
        _agent_fk("langgraph_blobs"),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_langgraph_blobs")),
    )
    op.create_index(
        "uq_langgraph_blobs_key",
        "langgraph_blobs",
        ["agent_id", "thread_id", "checkpoint_ns", "channel", "version"],
        unique=True,
    )
    op.create_table(
        "langgraph_writes",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("agent_id", sa.Integer(), nullable=False),
        sa.Column("thread_id", sa.String(length=255), nullable=False),
        sa.Column("checkpoint_ns", sa.String(length=255), nullable=False),
        sa.Column("checkpoint_id", sa.String(length=128), nullable=False),
        sa.Column("task_id", sa.String(length=255), nullable=False),
        sa.Column("task_path", sa.Text(), nullable=False),
        sa.Column("idx", sa.Integer(), nullable=False),
        sa.Column("channel", sa.String(length=255), nullable=False),
        sa.Column("type", sa.String(length=64), nullable=False),
        sa.Column("blob", sa.LargeBinary(), nullable=False),
        sa.Column("size_bytes", sa.Integer(), nullable=False),
        _agent_fk("langgraph_writes"),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_langgraph_writes")),
    )
    op.create_index(
        "uq_langgraph_writes_key",
        "langgraph_writes",
        ["agent_id", "thread_id", "checkpoint_ns", "checkpoint_id", "task_id", "idx"],
        unique=True,
    )
    op.create_table(
        "langgraph_store_items",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("agent_id", sa.Integer(), nullable=False),
        sa.Column("namespace", sa.String(length=1024), nullable=False),
        sa.Column("key", sa.String(length=512), nullable=False),
        sa.Column("memory_id", sa.Integer(), nullable=False),
        sa.Column("value_format", sa.String(length=8), nullable=False),
        sa.Column("created_at", sa.DateTime(), nullable=False),
        _agent_fk("langgraph_store_items"),
        sa.ForeignKeyConstraint(
            ["memory_id"],
            ["agent_memories.id"],
            name=op.f("fk_langgraph_store_items_memory_id_agent_memories"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_langgraph_store_items")),
    )
    op.create_index(
        "uq_langgraph_store_items_key", "langgraph_store_items", ["agent_id", "namespace", "key"], unique=True
    )
    op.create_index("ix_langgraph_store_items_memory", "langgraph_store_items", ["memory_id"], unique=False)


def downgrade():
    op.drop_table("langgraph_store_items")
    op.drop_table("langgraph_writes")
    op.drop_table("langgraph_blobs")
    op.drop_table("langgraph_checkpoints")
