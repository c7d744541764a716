"""What a batch's report reads: the ratings, outputs and comments frames, and the data revision its cache is
kept by."""
