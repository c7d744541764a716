"""The API's resources, one module each; every handler parses, calls one service function, and shapes its answer."""
