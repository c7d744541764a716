"""The queries behind the reviewer's side: assignments and their locks, pool claims, what a reviewer opens and
answers, drafts, their finished items and progress. Blind: no module here reads a model's name."""
