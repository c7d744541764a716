"""The queries behind a batch: its rows and the bulk write of a new one (``batches``), and the admin's
housekeeping (``admin``)."""
