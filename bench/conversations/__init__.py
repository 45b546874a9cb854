"""Generators of conversational memory sets for evaluating retrieval; see bench/conversational.py."""
