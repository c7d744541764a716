"""The LLM judge's tables: judges, and their judgements of a batch's items (``runs``)."""
