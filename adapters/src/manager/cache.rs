//! What is served while a server starts and remembered between runs: its lists and its era.
