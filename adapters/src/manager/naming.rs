//! One namespace for the host: each server's tools under one legal, collision-free name.
