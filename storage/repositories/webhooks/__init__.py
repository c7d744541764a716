"""Queries behind webhooks (``reviewer_app.webhooks``): hooks, the outbox of events, deliveries. Batch ids and
event payloads only; nothing here reads ratings or model names."""
