"""The memory row and the rules of a memory on its own: its columns and field rules, its category
allowlists, and the writing rules. The bottom of `models/`: it imports no other topic."""
