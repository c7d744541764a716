"""What a preference export writes beside the panel's verdicts: each sample's prompt and each output's text, as
loaded (unblinded: the outputs are keyed by model name). For leads and the command line only: the reviewer's side
never imports this module (``tests/test_import_graph.py``).
"""

from __future__ import annotations

from sqlalchemy import select as sa_select
from sqlmodel import Session, col

from storage.models import Model, Output, Sample
from storage.repositories.query import pk


def sample_prompts(session: Session, batch_id: int) -> dict[str, str]:
    """The batch's samples, key (the batch file's ``sample_id``) -> the prompt as stored (JSON text: a string or
    a list of messages), in the order they were loaded."""
    stmt = sa_select(col(Sample.key), col(Sample.prompt_json)).where(col(Sample.batch_id) == batch_id)
    return {str(key): str(prompt) for key, prompt in session.execute(stmt.order_by(pk(Sample.id)))}


def output_texts(session: Session, batch_id: int) -> dict[tuple[str, str, int], str]:
    """The batch's own outputs, (sample key, model name, repeat) -> the text as loaded (not the masked text a
    reviewer may have been shown instead: a preference pairs what the models wrote)."""
    stmt = (
        sa_select(col(Sample.key), col(Model.name), col(Output.repeat), col(Output.text))
        .join(Sample, pk(Sample.id) == col(Output.sample_id))
        .join(Model, pk(Model.id) == col(Output.model_id))
        .where(col(Output.batch_id) == batch_id)
    )
    return {(str(key), str(model), int(repeat)): str(text) for key, model, repeat, text in session.execute(stmt)}
