/// Fuzz entry point for the request engine (filled in with the engine).
pub fn engine_ops(_data: &[u8]) {}
