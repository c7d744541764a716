"""The queries behind a batch: its rows and the bulk write of a new one (``batches``), the admin's
housekeeping (``admin``), and its adaptive pool's held-back samples and scenario states (``allocation``)."""
