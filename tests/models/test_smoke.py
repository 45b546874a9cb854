from models import AgentMemory, db


def test_memory_created_through_mutation_path_has_derived_fields(make_agent, make_memory):
    agent = make_agent()
    memory = make_memory(agent, "  Prefers Earl Grey  ")
    db.session.expire_all()
    row = db.session.get(AgentMemory, memory.id)
    assert row.content == "Prefers Earl Grey"
    assert row.token_estimate == 5
    assert agent.core_token_usage == 5
